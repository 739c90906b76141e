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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;

/**
 * A Chrome trace of one rank (the JSON that chrome://tracing and Perfetto open): one complete event ("ph":"X") per
 * op run, named by op type with its index, on pid = rank and tid = the running thread. {@code c_allreduce} spans
 * also carry the bytes they reduce. Timestamps are wall-clock microseconds, so the files of ranks on one host line
 * up when loaded together. Events are kept in memory until {@link #write}; an executor without a timeline pays nothing.
 * An overlapped allreduce ({@code c_allreduce_start} ... {@code c_wait}) also gets a span "c_allreduce (in flight)"
 * on a row of its ring, from its start to the end of its wait: the ops of other rows under it ran while it was
 * issued and not yet waited for (its real end lies somewhere before the end of the wait).
 */
public final class Timeline implements Executor.OpObserver {
    private record Span(String type, int index, long startMicros, long durMicros, long threadId, long bytes) {
    }

    /** Row ids of the in-flight spans: far from real thread ids, one per ring. */
    private static final long IN_FLIGHT_ROW = 1L << 40;
    static final String IN_FLIGHT = "c_allreduce (in flight)";

    private final int rank;
    private final Program program;
    private final long originNanos = System.nanoTime();
    private final long originMicros = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    private final ThreadLocal<long[]> started = ThreadLocal.withInitial(() -> new long[1]);
    private final List<Span> spans = new ArrayList<>();
    /** For each c_wait's index, the index of the c_allreduce_start whose handle it waits for. */
    private final Map<Integer, Integer> startOfWait = new HashMap<>();
    private final Map<Integer, Long> inFlightSince = new ConcurrentHashMap<>();

    /** Records the ops {@code executor} runs; allreduce sizes are read from {@code program}'s ops. */
    public static Timeline attach(Executor executor, Program program, int rank) {
        Timeline t = new Timeline(rank, program);
        executor.addObserver(t);
        return t;
    }

    private Timeline(int rank, Program program) {
        this.rank = rank;
        this.program = program;
        List<Op> ops = program.globalBlock().ops();
        Map<String, Integer> startOfWork = new HashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.type().equals(CollectiveOpTypes.ALLREDUCE_START)) {
                startOfWork.put(op.out("Work"), i);
            } else if (op.type().equals(CollectiveOpTypes.WAIT) && startOfWork.containsKey(op.in("Work"))) {
                startOfWait.put(i, startOfWork.get(op.in("Work")));
            }
        }
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
        long now = System.nanoTime();
        started.get()[0] = now;
        if (CollectiveOpTypes.ALLREDUCE_START.equals(type)) {
            inFlightSince.put(index, now);
        }
    }

    @Override
    public void opFinished(int index, String type) {
        long end = System.nanoTime();
        long start = started.get()[0];
        boolean allreduce = CollectiveOpTypes.ALLREDUCE.equals(type) || CollectiveOpTypes.ALLREDUCE_START.equals(type);
        add(new Span(type, index, originMicros + (start - originNanos) / 1000, Math.max(0, (end - start) / 1000),
                Thread.currentThread().threadId(), allreduce ? allreduceBytes(index) : -1));
        Integer issued = CollectiveOpTypes.WAIT.equals(type) ? startOfWait.get(index) : null;
        Long since = issued == null ? null : inFlightSince.remove(issued);
        if (since != null) {
            int ring = program.globalBlock().ops().get(issued).intAttr("ring_id");
            add(new Span(IN_FLIGHT, issued, originMicros + (since - originNanos) / 1000, Math.max(0, (end - since) / 1000),
                    IN_FLIGHT_ROW + ring, allreduceBytes(issued)));
        }
    }

    private void add(Span s) {
        synchronized (spans) {
            spans.add(s);
        }
    }

    /** Bytes of the op's X as the program declares them; -1 when the index is not an allreduce of the program. */
    private long allreduceBytes(int index) {
        List<Op> ops = program.globalBlock().ops();
        if (index < 0 || index >= ops.size() || !(ops.get(index).type().equals(CollectiveOpTypes.ALLREDUCE)
                || ops.get(index).type().equals(CollectiveOpTypes.ALLREDUCE_START))) {
            return -1;
        }
        long total = 0;
        for (String name : ops.get(index).input("X")) {
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
            spans.stream().mapToLong(Span::threadId).filter(t -> t >= IN_FLIGHT_ROW).distinct().forEach(t -> {
                ObjectNode row = events.addObject().put("name", "thread_name").put("ph", "M").put("pid", rank).put("tid", t);
                row.putObject("args").put("name", "allreduce in flight, ring " + (t - IN_FLIGHT_ROW));
            });
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
