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
            .withShmSlotBytes(64 << 10).withTcpChunkBytes(16 << 10);
    static final long[] COUNTS = {0, 1, 7, 50_003};

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

    private static void checkAll(ProcessGroup g, DataType dt, long count) {
        int n = g.size();
        int r = g.rank();
        Duration t = Duration.ofSeconds(60);
        try (Arena arena = Arena.ofShared()) {
            for (ReduceOp op : ReduceOp.values()) {
                MemorySegment buf = Buffers.filled(arena, dt, count, r);
                g.allreduce(buf, dt, op).await(t);
                for (long i = 0; i < count; i++) {
                    assertEquals(Buffers.expected(dt, op, n, i), Buffers.get(buf, dt, i),
                            () -> "allreduce " + op + " " + dt + " x " + count + " rank " + r);
                }
                int root = n - 1;
                MemorySegment red = Buffers.filled(arena, dt, count, r);
                g.reduce(red, dt, op, root).await(t);
                for (long i = 0; i < count; i++) {
                    double want = r == root ? Buffers.expected(dt, op, n, i) : Buffers.value(r, i);
                    assertEquals(want, Buffers.get(red, dt, i), () -> "reduce " + op + " " + dt + " x " + count + " rank " + r);
                }
                MemorySegment send = Buffers.filled(arena, dt, count * n, r);
                MemorySegment recv = arena.allocate(Math.max(1, count) * dt.byteSize()).asSlice(0, count * dt.byteSize());
                g.reduceScatter(send, recv, dt, op).await(t);
                for (long i = 0; i < count; i++) {
                    assertEquals(Buffers.expected(dt, op, n, r * count + i), Buffers.get(recv, dt, i),
                            () -> "reduce_scatter " + op + " " + dt + " x " + count + " rank " + r);
                }
            }
            int bRoot = n / 2;
            MemorySegment b = Buffers.filled(arena, dt, count, r);
            g.broadcast(b, dt, bRoot).await(t);
            for (long i = 0; i < count; i++) {
                assertEquals(Buffers.value(bRoot, i), Buffers.get(b, dt, i), () -> "broadcast " + dt + " x " + count);
            }
            MemorySegment mine = Buffers.filled(arena, dt, count, r);
            MemorySegment all = arena.allocate(Math.max(1, count * n) * dt.byteSize()).asSlice(0, count * n * dt.byteSize());
            g.allgather(mine, all, dt).await(t);
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < count; i++) {
                    assertEquals(Buffers.value(j, i), Buffers.get(all, dt, j * count + i), "allgather " + dt + " x " + count);
                }
            }
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
                for (long i = 0; i < count; i++) {
                    assertEquals(Buffers.value(prev, i), Buffers.get(in, dt, i), "send/recv " + dt + " x " + count);
                }
            }
            g.barrier().await(t);
        }
    }
}
