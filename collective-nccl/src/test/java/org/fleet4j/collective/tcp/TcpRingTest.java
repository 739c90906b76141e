package org.fleet4j.collective.tcp;

import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.EOFException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tcp backend's own paths, on groups built directly over a real store and real sockets: the two-rank swap for
 * small allreduces, the ring (reduce-scatter and allgather in one pipelined exchange) above it, with the average's
 * division done per chunk, and the listener refusing a second connection from a rank that is already connected.
 */
class TcpRingTest {
    private static final Duration T = Duration.ofSeconds(60);

    /** 1..4, different per rank and index: sums and products of a few stay exact in f32. */
    private static long value(int rank, long i) {
        return 1 + Math.floorMod(i * 31 + rank * 17L, 4);
    }

    private static double expected(ReduceOp op, DataType dt, int n, long i) {
        long acc = value(0, i);
        for (int r = 1; r < n; r++) {
            long v = value(r, i);
            acc = switch (op) {
                case SUM, AVG -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
            };
        }
        if (op != ReduceOp.AVG) {
            return acc;
        }
        return dt == DataType.I64 ? acc / n : (double) ((float) acc / (float) n);
    }

    private static MemorySegment filled(Arena arena, DataType dt, long count, int rank) {
        MemorySegment s = arena.allocate(count * dt.byteSize(), 64);
        for (long i = 0; i < count; i++) {
            if (dt == DataType.I64) {
                s.setAtIndex(ValueLayout.JAVA_LONG, i, value(rank, i));
            } else {
                s.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(rank, i));
            }
        }
        return s;
    }

    private static double get(MemorySegment s, DataType dt, long i) {
        return dt == DataType.I64 ? s.getAtIndex(ValueLayout.JAVA_LONG, i) : s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
    }

    /**
     * Counts below, at and above the two-rank swap limit, and odd ones that split unevenly over ranks and chunks;
     * 4 KiB chunks, so the large count takes dozens of chunks per segment with forwarding between phases.
     */
    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {2, 3, 4})
    void allreduceIsExactForEveryOpAroundTheSwapLimit(int n) throws Exception {
        long swapLimitF32 = TcpProcessGroup.SWAP_MAX_BYTES / 4;
        long[] counts = {1, 3, swapLimitF32, swapLimitF32 + 1, 100_003};
        try (TcpWorld w = new TcpWorld(n, 4 << 10); Arena arena = Arena.ofShared()) {
            w.run((rank, g) -> {
                for (DataType dt : new DataType[] {DataType.F32, DataType.I64}) {
                    for (long count : counts) {
                        for (ReduceOp op : ReduceOp.values()) {
                            MemorySegment buf = filled(arena, dt, count, rank);
                            g.allreduce(buf, dt, op).await(T);
                            for (long i = 0; i < count; i++) {
                                double want = expected(op, dt, n, i);
                                if (get(buf, dt, i) != want) {
                                    assertEquals(want, get(buf, dt, i), op + " " + dt + " x " + count + " on rank "
                                            + rank + " of " + n + ", element " + i);
                                }
                            }
                        }
                    }
                }
            });
        }
    }

    /** Rounded sums must come out bit-identical on every rank, or replicas of a model drift apart. */
    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {2, 3})
    void everyRankGetsTheSameBitsFromRoundedSums(int n) throws Exception {
        long[] counts = {5_000, 1_000_003};
        try (TcpWorld w = new TcpWorld(n, 64 << 10); Arena arena = Arena.ofShared()) {
            List<MemorySegment> results = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                results.add(null);
            }
            for (long count : counts) {
                w.run((rank, g) -> {
                    Random random = new Random(1000L * rank + count);
                    MemorySegment buf = arena.allocate(count * 4, 64);
                    for (long i = 0; i < count; i++) {
                        buf.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) random.nextGaussian());
                    }
                    g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                    synchronized (results) {
                        results.set(rank, buf);
                    }
                });
                for (int r = 1; r < n; r++) {
                    assertEquals(-1L, results.get(0).mismatch(results.get(r)),
                            "rank " + r + " differs from rank 0 (f32 x " + count + ")");
                }
            }
        }
    }

    /** A valid hello from a rank that is already connected is refused; the group's data path is unaffected. */
    @Test
    void aSecondConnectionFromAConnectedRankIsClosedAndTheGroupCarriesOn() throws Exception {
        try (TcpWorld w = new TcpWorld(2, 64 << 10); Arena arena = Arena.ofShared()) {
            String endpoint = w.stores.get(0).getString("g/default/tcp/0", T);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                s.setSoTimeout(15_000);
                assertThrows(EOFException.class, () -> TcpListener.introduce(s.getInputStream(), s.getOutputStream(),
                        w.contexts.get(1), 0), "the listener must close a second connection from rank 1 unanswered");
            }
            w.run((rank, g) -> {
                MemorySegment buf = filled(arena, DataType.F32, 1000, rank);
                g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                for (long i = 0; i < 1000; i++) {
                    assertTrue(get(buf, DataType.F32, i) == expected(ReduceOp.SUM, DataType.F32, 2, i), "element " + i);
                }
            });
        }
    }
}
