package org.fleet4j.collective;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every operation, dtype and reduce op, for sizes 0, 1, odd and multi-round, worlds of 1 to 4, both backends. */
class CollectiveCorrectnessTest {
    /** Small slots and chunks so that the "large" size takes many pipeline rounds without costing much time. */
    static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(30))
            .withShmSlotBytes(4096).withTcpChunkBytes(1024);
    static final long[] COUNTS = {0, 1, 7, 5_003};

    static Stream<Arguments> worlds() {
        List<Arguments> out = new ArrayList<>();
        for (Backend b : new Backend[] {Backend.SHM, Backend.TCP}) {
            for (int n = 1; n <= 4; n++) {
                out.add(Arguments.of(b, n));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} world {1}")
    @MethodSource("worlds")
    void everyOperationDtypeAndSize(Backend backend, int world) throws Exception {
        try (LocalWorld w = new LocalWorld(world, OPTIONS.withBackend(backend))) {
            assertEquals(backend, w.group(0).backend());
            w.run((rank, g) -> {
                for (DataType dt : DataType.values()) {
                    for (long count : COUNTS) {
                        checkAll(g, dt, count);
                    }
                }
                return null;
            });
        }
    }

    /**
     * The matrix above uses slots small enough for the one-synchronisation path; chunks above 64 KiB take the
     * path where each rank reduces its own share, checked here with several rounds of 256 KiB slots.
     */
    @ParameterizedTest(name = "shm world {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3, 4})
    void largeChunksReduceByShares(int world) throws Exception {
        long count = 100_003;
        try (LocalWorld w = new LocalWorld(world, OPTIONS.withBackend(Backend.SHM).withShmSlotBytes(256 << 10));
             Arena arena = Arena.ofShared()) {
            w.run((rank, g) -> {
                for (DataType dt : new DataType[] {DataType.F32, DataType.I64, DataType.BF16}) {
                    for (ReduceOp op : ReduceOp.values()) {
                        MemorySegment buf = Buffers.filled(arena, dt, count, rank);
                        g.allreduce(buf, dt, op).await(Duration.ofSeconds(60));
                        verify(buf, dt, count, i -> Buffers.expected(dt, op, world, i), "allreduce " + op, rank);
                        MemorySegment red = Buffers.filled(arena, dt, count, rank);
                        g.reduce(red, dt, op, 1).await(Duration.ofSeconds(60));
                        verify(red, dt, count, i -> rank == 1 ? Buffers.expected(dt, op, world, i) : Buffers.value(rank, i),
                                "reduce " + op, rank);
                    }
                }
                return null;
            });
        }
    }

    private static void checkAll(ProcessGroup g, DataType dt, long count) {
        int n = g.size();
        int r = g.rank();
        Duration t = Duration.ofSeconds(60);
        try (Arena arena = Arena.ofShared()) {
            for (ReduceOp op : ReduceOp.values()) {
                MemorySegment buf = Buffers.filled(arena, dt, count, r);
                g.allreduce(buf, dt, op).await(t);
                verify(buf, dt, count, i -> Buffers.expected(dt, op, n, i), "allreduce " + op, r);
                int root = n - 1;
                MemorySegment red = Buffers.filled(arena, dt, count, r);
                g.reduce(red, dt, op, root).await(t);
                verify(red, dt, count, i -> r == root ? Buffers.expected(dt, op, n, i) : Buffers.value(r, i), "reduce " + op, r);
                MemorySegment send = Buffers.filled(arena, dt, count * n, r);
                MemorySegment recv = arena.allocate(Math.max(1, count) * dt.byteSize()).asSlice(0, count * dt.byteSize());
                g.reduceScatter(send, recv, dt, op).await(t);
                verify(recv, dt, count, i -> Buffers.expected(dt, op, n, r * count + i), "reduce_scatter " + op, r);
            }
            int bRoot = n / 2;
            MemorySegment b = Buffers.filled(arena, dt, count, r);
            g.broadcast(b, dt, bRoot).await(t);
            verify(b, dt, count, i -> Buffers.value(bRoot, i), "broadcast", r);
            MemorySegment mine = Buffers.filled(arena, dt, count, r);
            MemorySegment all = arena.allocate(Math.max(1, count * n) * dt.byteSize()).asSlice(0, count * n * dt.byteSize());
            g.allgather(mine, all, dt).await(t);
            verify(all, dt, count * n, i -> Buffers.value((int) (i / count), i % count), "allgather", r);
            if (n > 1) {
                // ring exchange; even ranks send first so that large sends (which wait for the receiver) cannot deadlock
                MemorySegment out = Buffers.filled(arena, dt, count, r);
                MemorySegment in = arena.allocate(Math.max(1, count) * dt.byteSize()).asSlice(0, count * dt.byteSize());
                int next = (r + 1) % n;
                int prev = (r + n - 1) % n;
                if (r % 2 == 0) {
                    g.send(out, dt, next).await(t);
                    g.recv(in, dt, prev).await(t);
                } else {
                    g.recv(in, dt, prev).await(t);
                    g.send(out, dt, next).await(t);
                }
                verify(in, dt, count, i -> Buffers.value(prev, i), "send/recv", r);
            }
            g.barrier().await(t);
        }
    }

    private interface Expected {
        double at(long i);
    }

    /** Compares every element, reporting the first difference (cheaper than one assertion per element). */
    private static void verify(MemorySegment s, DataType dt, long count, Expected e, String what, int rank) {
        for (long i = 0; i < count; i++) {
            double got = Buffers.get(s, dt, i);
            if (got != e.at(i)) {
                assertEquals(e.at(i), got, what + " " + dt + " x " + count + " on rank " + rank + ", element " + i);
            }
        }
    }
}
