package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.Work;
import org.fleet4j.collective.group.OpKind;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.tensorboard.SummaryWriter;
import org.fleet4j.launch.ExitCodes;
import org.fleet4j.launch.NamedProgram;

/**
 * nccl-tests style bandwidth benchmark: for each size, times back-to-back operations on f32 buffers and prints
 * bytes, count, time, algbw and busbw (algbw scaled by the operation's traffic factor, e.g. 2(n-1)/n for
 * allreduce). Each figure is the median of several repeats; a repeat's time is the slowest rank's mean. Rank 0
 * writes the rows to {@code $FLEET_LOG_DIR/allreduce_perf.json}. With {@code --registered} every size is timed twice,
 * on ordinary memory and on the group's {@link ProcessGroup#registeredBuffer}, the repeats of the two interleaved so
 * that both see the same load; each row then names its buffer.
 */
@AutoService(NamedProgram.class)
public final class AllreducePerf implements NamedProgram {
    @Override
    public String programName() {
        return "allreduce_perf";
    }

    /** Rank 0's time spent warming up each size before it is calibrated and timed. */
    private static final long WARMUP_NANOS = 1_000_000_000L;
    /** One table row. */
    record Row(long bytes, long count, String buffer, double timeUs, double algbwGbps, double busbwGbps) {
    }

    public static void main(String[] args) {
        AllreducePerfArgs opts;
        Role role;
        SummaryWriter tensorboard;
        try {
            opts = AllreducePerfArgs.parse(args);
            role = Role.fromEnvironment();
            tensorboard = role.rank() == 0 ? TensorBoardOption.writerIn(opts.tensorboard()) : null;
        } catch (IllegalArgumentException e) {
            System.err.println("allreduce_perf: " + e.getMessage());
            System.exit(ExitCodes.BAD_INPUT);
            return;
        }
        GroupOptions groupOptions = GroupOptions.defaults().withBackend(opts.backend()).withShmSlotBytes(opts.slotBytes())
                .withTcpChunkBytes(opts.chunkBytes()).withVerifyCalls(opts.verifyCalls());
        try (ProcessGroup group = ProcessGroups.init(role, groupOptions); SummaryWriter rank0 = tensorboard) {
            List<Row> rows = run(group, opts);
            if (group.rank() == 0) {
                writeJson(rows);
            }
            if (rank0 != null) {
                writeScalars(rank0, rows, opts);
            }
        } catch (CollectiveException | IllegalArgumentException | IOException e) {
            System.err.println("allreduce_perf: rank " + role.rank() + ": " + e.getMessage());
            System.exit(ExitCodes.of(e));
        }
    }

    static List<Row> run(ProcessGroup g, AllreducePerfArgs opts) {
        int n = g.size();
        if (g.rank() == 0) {
            System.out.printf(Locale.ROOT, "# allreduce_perf: %s, %d ranks, backend %s, f32 sum, median of %d repeats%n",
                    opts.op().displayName(), n, g.backend().name().toLowerCase(Locale.ROOT), opts.repeats());
            System.out.printf(Locale.ROOT, "%12s %12s %s%12s %10s %10s%n", "size(B)", "count",
                    opts.registered() ? String.format(Locale.ROOT, "%11s", "buffer") : "", "time(us)", "algbw(GB/s)",
                    "busbw(GB/s)");
        }
        List<Row> rows = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            for (long bytes : opts.sizes()) {
                long count = bytes / 4;
                List<String> buffers = opts.registered() ? List.of("ordinary", "registered") : List.of("ordinary");
                Runnable[] once = new Runnable[buffers.size()];
                int[] iters = new int[buffers.size()];
                double[][] times = new double[buffers.size()][opts.repeats()];
                for (int v = 0; v < buffers.size(); v++) {
                    MemorySegment a = v == 0 ? arena.allocate(count * 4, 4096)
                            : g.registeredBuffer("allreduce_perf " + bytes, count * 4);
                    MemorySegment b = arena.allocate(count * 4, 4096);
                    for (long i = 0; i < count; i++) {
                        a.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1f);
                    }
                    once[v] = operation(g, opts.op(), a, b, count);
                    iters[v] = calibrate(g, once[v], bytes, opts.perSize());
                }
                for (int rep = 0; rep < opts.repeats(); rep++) {
                    for (int v = 0; v < buffers.size(); v++) {
                        g.barrier().await(Duration.ofMinutes(5));
                        long t0 = System.nanoTime();
                        for (int i = 0; i < iters[v]; i++) {
                            once[v].run();
                        }
                        times[v][rep] = slowest(g, (System.nanoTime() - t0) / 1e3 / iters[v]);
                    }
                }
                for (int v = 0; v < buffers.size(); v++) {
                    Arrays.sort(times[v]);
                    double us = times[v][times[v].length / 2];
                    double algbw = bytes / us / 1e3;
                    Row row = new Row(bytes, count, buffers.get(v), us, algbw, algbw * busFactor(opts.op(), n));
                    rows.add(row);
                    if (g.rank() == 0) {
                        System.out.printf(Locale.ROOT, "%12d %12d %s%12.2f %10.3f %10.3f%n", row.bytes(), row.count(),
                                opts.registered() ? String.format(Locale.ROOT, "%11s", row.buffer()) : "", row.timeUs(),
                                row.algbwGbps(), row.busbwGbps());
                    }
                }
            }
        }
        return rows;
    }

    /** One operation on the whole buffer: the allreduce buffer, the allgather output, the reduce-scatter input. */
    private static Runnable operation(ProcessGroup g, OpKind op, MemorySegment a, MemorySegment b, long count) {
        int n = g.size();
        Duration t = Duration.ofMinutes(5);
        long share = count / n;
        return switch (op) {
            case ALLREDUCE -> () -> g.allreduce(a, DataType.F32, ReduceOp.SUM).await(t);
            case BROADCAST -> () -> g.broadcast(a, DataType.F32, 0).await(t);
            case ALLGATHER -> () -> g.allgather(a.asSlice(g.rank() * share * 4, share * 4), b.asSlice(0, share * n * 4),
                    DataType.F32).await(t);
            case REDUCE_SCATTER -> () -> g.reduceScatter(a.asSlice(0, share * n * 4), b.asSlice(0, share * 4), DataType.F32,
                    ReduceOp.SUM).await(t);
            default -> throw new IllegalArgumentException("allreduce_perf does not time " + op.displayName());
        };
    }

    /**
     * Warms up, then doubles a probe until it lasts a tenth of {@code target}, and derives the iteration count from
     * it. Every rank runs the same number of operations; rank 0's timing decides, broadcast to all.
     */
    private static int calibrate(ProcessGroup g, Runnable once, long bytes, Duration target) {
        // warm up in batches until rank 0 has spent WARMUP_NANOS: the JIT's C2 compiles of the small-message path
        // arrive only after a few hundred milliseconds, when both cores are busy; every rank runs the same batches
        long batch = Math.max(5, Math.min(5_000, (64L << 20) / Math.max(1, bytes)));
        long warmedNanos = 0;
        while (warmedNanos < WARMUP_NANOS) {
            long t0 = System.nanoTime();
            for (long i = 0; i < batch; i++) {
                once.run();
            }
            warmedNanos += rootsValue(g, System.nanoTime() - t0);
        }
        long probe = 1;
        while (true) {
            long t0 = System.nanoTime();
            for (long i = 0; i < probe; i++) {
                once.run();
            }
            long elapsed = rootsValue(g, System.nanoTime() - t0);
            if (elapsed >= target.toNanos() / 10 || probe >= 100_000) {
                return (int) Math.max(3, Math.min(1_000_000, probe * target.toNanos() / Math.max(1, elapsed)));
            }
            probe *= 2;
        }
    }

    private static long rootsValue(ProcessGroup g, long value) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment v = arena.allocate(8);
            v.set(ValueLayout.JAVA_LONG, 0, value);
            g.broadcast(v, DataType.I64, 0).await(Duration.ofMinutes(5));
            return v.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    private static double slowest(ProcessGroup g, double us) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment v = arena.allocate(8);
            v.set(ValueLayout.JAVA_DOUBLE, 0, us);
            g.allreduce(v, DataType.F64, ReduceOp.MAX).await(Duration.ofMinutes(5));
            return v.get(ValueLayout.JAVA_DOUBLE, 0);
        }
    }

    static double busFactor(OpKind op, int n) {
        return switch (op) {
            case ALLREDUCE -> 2.0 * (n - 1) / n;
            case ALLGATHER, REDUCE_SCATTER -> (n - 1) / (double) n;
            default -> 1.0;
        };
    }

    /**
     * The table as TensorBoard scalars, the message size in bytes as the step: {@code allreduce/busbw_gbps},
     * {@code allreduce/algbw_gbps} and {@code allreduce/time_us} (with {@code --registered}: {@code allreduce/ordinary/...}
     * and {@code allreduce/registered/...}).
     */
    private static void writeScalars(SummaryWriter tensorboard, List<Row> rows, AllreducePerfArgs opts) {
        for (Row r : rows) {
            String prefix = opts.op().displayName() + "/" + (opts.registered() ? r.buffer() + "/" : "");
            tensorboard.addScalar(prefix + "busbw_gbps", r.busbwGbps(), r.bytes());
            tensorboard.addScalar(prefix + "algbw_gbps", r.algbwGbps(), r.bytes());
            tensorboard.addScalar(prefix + "time_us", r.timeUs(), r.bytes());
        }
    }

    private static void writeJson(List<Row> rows) throws IOException {
        Path dir = Path.of(System.getenv().getOrDefault("FLEET_LOG_DIR", "log"));
        Files.createDirectories(dir);
        StringBuilder json = new StringBuilder("[\n");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            json.append(String.format(Locale.ROOT, "  {\"bytes\": %d, \"time_us\": %.3f, \"algbw_gbps\": %.4f, \"busbw_gbps\": %.4f, \"buffer\": \"%s\"}%s%n",
                    r.bytes(), r.timeUs(), r.algbwGbps(), r.busbwGbps(), r.buffer(), i + 1 < rows.size() ? "," : ""));
        }
        json.append("]\n");
        Files.writeString(dir.resolve("allreduce_perf.json"), json);
    }
}
