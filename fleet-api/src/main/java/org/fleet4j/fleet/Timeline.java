package org.fleet4j.fleet;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.fleet.ops.CollectiveOps;

/**
 * A Chrome trace of one rank (the JSON that chrome://tracing and Perfetto open): one complete event ("ph":"X") per
 * op run, named by op type with its index, on pid = rank and tid = the running thread. {@code c_allreduce} spans
 * also carry the bytes they reduce. Timestamps are wall-clock microseconds, so the files of ranks on one host line
 * up when loaded together. Events are kept in memory until {@link #write}; an executor without a timeline pays nothing.
 */
public final class Timeline implements Executor.OpObserver {
    private record Span(String type, int index, long startMicros, long durMicros, long threadId, long bytes) {
    }

    private final int rank;
    private final Program program;
    private final long originNanos = System.nanoTime();
    private final long originMicros = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    private final ThreadLocal<long[]> started = ThreadLocal.withInitial(() -> new long[1]);
    private final List<Span> spans = new ArrayList<>();

    /** Records the ops {@code executor} runs; allreduce sizes are read from {@code program}'s ops. */
    public static Timeline attach(Executor executor, Program program, int rank) {
        Timeline t = new Timeline(rank, program);
        executor.addObserver(t);
        return t;
    }

    private Timeline(int rank, Program program) {
        this.rank = rank;
        this.program = program;
    }

    /** {@code trace.json} becomes {@code trace.rank3.json} (and {@code trace} becomes {@code trace.rank3}). */
    public static Path rankFile(Path file, int rank) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String ranked = dot > 0 ? name.substring(0, dot) + ".rank" + rank + name.substring(dot) : name + ".rank" + rank;
        return file.resolveSibling(ranked);
    }

    @Override
    public void opStarted(int index, String type) {
        started.get()[0] = System.nanoTime();
    }

    @Override
    public void opFinished(int index, String type) {
        long end = System.nanoTime();
        long start = started.get()[0];
        long bytes = CollectiveOps.ALLREDUCE.equals(type) ? allreduceBytes(index) : -1;
        Span s = new Span(type, index, originMicros + (start - originNanos) / 1000, Math.max(0, (end - start) / 1000),
                Thread.currentThread().threadId(), bytes);
        synchronized (spans) {
            spans.add(s);
        }
    }

    /** Bytes of the op's inputs as the program declares them; -1 when the index is not an allreduce of the program. */
    private long allreduceBytes(int index) {
        List<Op> ops = program.globalBlock().ops();
        if (index < 0 || index >= ops.size() || !ops.get(index).type().equals(CollectiveOps.ALLREDUCE)) {
            return -1;
        }
        long total = 0;
        for (String name : ops.get(index).allInputs()) {
            Var v = program.globalBlock().findVar(name);
            if (v == null) {
                return -1;
            }
            long n = 1;
            for (long d : v.shape()) {
                if (d < 0) {
                    return -1;
                }
                n *= d;
            }
            total += n * v.dtype().byteSize();
        }
        return total;
    }

    /** Number of op spans recorded so far. */
    public int size() {
        synchronized (spans) {
            return spans.size();
        }
    }

    /** Writes every span recorded so far as {@code {"traceEvents": [...]}}. */
    public void write(Path file) {
        ObjectMapper json = new ObjectMapper();
        ObjectNode root = json.createObjectNode();
        ArrayNode events = root.putArray("traceEvents");
        ObjectNode process = events.addObject().put("name", "process_name").put("ph", "M").put("pid", rank);
        process.putObject("args").put("name", "rank " + rank);
        synchronized (spans) {
            for (Span s : spans) {
                ObjectNode e = events.addObject();
                e.put("name", s.type()).put("cat", s.bytes() >= 0 ? "allreduce" : "op").put("ph", "X")
                        .put("ts", s.startMicros()).put("dur", s.durMicros()).put("pid", rank).put("tid", s.threadId());
                ObjectNode args = e.putObject("args").put("index", s.index());
                if (s.bytes() >= 0) {
                    args.put("bytes", s.bytes());
                }
            }
        }
        root.put("displayTimeUnit", "ms");
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            json.writeValue(file.toFile(), root);
        } catch (IOException e) {
            throw new UncheckedIOException("timeline " + file + " cannot be written: " + e.getMessage(), e);
        }
    }
}
