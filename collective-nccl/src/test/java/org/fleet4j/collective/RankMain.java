package org.fleet4j.collective;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Locale;
import org.fleet4j.collective.group.ProcessGroups;

/**
 * The program each rank JVM of the multi-process tests runs. Scenarios: {@code ops} (every operation, checked;
 * FLEET_TEST_DTYPES limits the dtypes) and {@code loop} (allreduce until something fails; FLEET_TEST_STALL names
 * a rank that stops taking part after the first iterations). Exit codes: 0 success, 3 a collective failed (its
 * message is printed).
 */
public final class RankMain {
    private RankMain() {
    }

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        Backend backend = Backend.parse(System.getenv().getOrDefault("FLEET_TEST_BACKEND", "auto"));
        long timeoutMs = Long.parseLong(System.getenv().getOrDefault("FLEET_TEST_TIMEOUT_MS", "30000"));
        GroupOptions options = GroupOptions.defaults().withBackend(backend).withTimeout(Duration.ofMillis(timeoutMs))
                .withShmSlotBytes(16 << 10).withTcpChunkBytes(4 << 10);
        try (ProcessGroup g = ProcessGroups.init(options)) {
            System.out.println("BACKEND " + g.backend().name().toLowerCase(Locale.ROOT));
            switch (scenario) {
                case "ops" -> ops(g);
                case "loop" -> loop(g, Integer.parseInt(System.getenv().getOrDefault("FLEET_TEST_STALL", "-1")));
                default -> throw new IllegalArgumentException("unknown scenario " + scenario);
            }
            System.out.println("OK");
        } catch (CollectiveException e) {
            System.out.println("FAILED: " + e.getMessage());
            System.out.flush();
            System.exit(3);
        }
    }

    private static void ops(ProcessGroup g) {
        Duration t = Duration.ofSeconds(60);
        int n = g.size();
        try (Arena arena = Arena.ofShared()) {
            String only = System.getenv("FLEET_TEST_DTYPES");
            DataType[] dtypes = only == null ? DataType.values()
                    : java.util.Arrays.stream(only.split(",")).map(DataType::parse).toArray(DataType[]::new);
            for (DataType dt : dtypes) {
                for (long count : new long[] {1, 13, 10_001}) {
                    for (ReduceOp op : ReduceOp.values()) {
                        MemorySegment buf = Buffers.filled(arena, dt, count, g.rank());
                        g.allreduce(buf, dt, op).await(t);
                        check(buf, dt, count, i -> Buffers.expected(dt, op, n, i), "allreduce " + op);
                    }
                    MemorySegment b = Buffers.filled(arena, dt, count, g.rank());
                    g.broadcast(b, dt, n - 1).await(t);
                    check(b, dt, count, i -> Buffers.value(n - 1, i), "broadcast");
                    MemorySegment all = arena.allocate(count * n * dt.byteSize());
                    g.allgather(Buffers.filled(arena, dt, count, g.rank()), all, dt).await(t);
                    check(all, dt, count * n, i -> Buffers.value((int) (i / count), i % count), "allgather");
                    MemorySegment part = arena.allocate(count * dt.byteSize());
                    g.reduceScatter(Buffers.filled(arena, dt, count * n, g.rank()), part, dt, ReduceOp.SUM).await(t);
                    long base = g.rank() * count;
                    check(part, dt, count, i -> Buffers.expected(dt, ReduceOp.SUM, n, base + i), "reduce_scatter");
                }
            }
            g.barrier().await(t);
        }
    }

    private interface Expected {
        double at(long i);
    }

    private static void check(MemorySegment s, DataType dt, long count, Expected e, String what) {
        for (long i = 0; i < count; i++) {
            if (Buffers.get(s, dt, i) != e.at(i)) {
                throw new IllegalStateException(what + " " + dt + " x " + count + ": element " + i + " is "
                        + Buffers.get(s, dt, i) + ", expected " + e.at(i));
            }
        }
    }

    private static void loop(ProcessGroup g, int stallRank) throws InterruptedException {
        Duration t = Duration.ofMinutes(5);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf = Buffers.filled(arena, DataType.F32, 1 << 16, g.rank());
            for (long iter = 1; ; iter++) {
                g.allreduce(buf, DataType.F32, ReduceOp.MAX).await(t);
                if (iter <= 3) {
                    System.out.println("ITER " + iter);
                    System.out.flush();
                }
                if (iter == 3 && g.rank() == stallRank) {
                    System.out.println("STALLING");
                    System.out.flush();
                    Thread.sleep(Duration.ofHours(1));
                }
            }
        }
    }
}
