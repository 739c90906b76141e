package org.fleet4j.collective;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Long runs of queued operations, concurrent communicators, subgroups and the hierarchical composition. */
class GroupCompositionTest {
    private static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(30))
            .withShmSlotBytes(16 << 10).withTcpChunkBytes(4 << 10);
    private static final Duration T = Duration.ofSeconds(60);

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void manyQueuedOperationsCompleteInIssueOrder(Backend backend) throws Exception {
        int ops = 400;
        try (LocalWorld w = new LocalWorld(3, OPTIONS.withBackend(backend)); Arena arena = Arena.ofShared()) {
            ReduceOp[] sequence = new ReduceOp[ops];
            java.util.Random random = new java.util.Random(11);
            for (int k = 0; k < ops; k++) {
                sequence[k] = ReduceOp.values()[random.nextInt(ReduceOp.values().length)];
            }
            w.run((rank, g) -> {
                // every result feeds the next operation, so any reordering or lost operation changes the end value
                MemorySegment buf = arena.allocate(8 * 100L);
                long[] expected = new long[100];
                for (int i = 0; i < 100; i++) {
                    Buffers.set(buf, DataType.I64, i, 1 + (i + rank) % 5);
                }
                List<Work> works = new ArrayList<>();
                for (ReduceOp op : sequence) {
                    works.add(g.allreduce(buf, DataType.I64, op));
                }
                works.getLast().await(T);
                for (Work wk : works) {
                    assertTrue(wk.isDone() && wk.error().isEmpty(), wk.toString());
                }
                for (int i = 0; i < 100; i++) {
                    long[] v = {1 + i % 5, 1 + (i + 1) % 5, 1 + (i + 2) % 5};
                    for (ReduceOp op : sequence) {
                        long r = switch (op) {
                            case SUM -> v[0] + v[1] + v[2];
                            case AVG -> (v[0] + v[1] + v[2]) / 3;
                            case PROD -> v[0] * v[1] * v[2];
                            case MAX -> Math.max(v[0], Math.max(v[1], v[2]));
                            case MIN -> Math.min(v[0], Math.min(v[1], v[2]));
                        };
                        v = new long[] {r, r, r};
                    }
                    expected[i] = v[0];
                    assertEquals(expected[i], buf.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i), "element " + i);
                }
                return null;
            });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void twoCommunicatorsRunConcurrently(Backend backend) throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(backend)); Arena arena = Arena.ofShared()) {
            List<ProcessGroup> second = w.run((rank, g) -> g.newGroup("channel1", g.options()));
            try {
                w.run((rank, g) -> {
                    ProcessGroup other = second.get(rank);
                    // a thread of its own: a shared pool with one worker would serialise the ranks' second channel
                    CompletableFuture<Void> onOther = new CompletableFuture<>();
                    Thread.ofPlatform().start(() -> {
                        try {
                            for (int k = 0; k < 50; k++) {
                                MemorySegment b = Buffers.filled(arena, DataType.F32, 5000, rank);
                                other.allreduce(b, DataType.F32, ReduceOp.MAX).await(T);
                                assertEquals(Buffers.expected(DataType.F32, ReduceOp.MAX, 2, 4999), Buffers.get(b, DataType.F32, 4999));
                            }
                            onOther.complete(null);
                        } catch (Throwable e) {
                            onOther.completeExceptionally(e);
                        }
                    });
                    for (int k = 0; k < 50; k++) {
                        MemorySegment b = Buffers.filled(arena, DataType.F64, 3000, rank);
                        g.allreduce(b, DataType.F64, ReduceOp.SUM).await(T);
                        assertEquals(Buffers.expected(DataType.F64, ReduceOp.SUM, 2, 2999), Buffers.get(b, DataType.F64, 2999));
                    }
                    onOther.join();
                    return null;
                });
            } finally {
                second.forEach(ProcessGroup::close);
            }
        }
    }

    @Test
    void subgroupsReduceAmongTheirMembersOnly() throws Exception {
        try (LocalWorld w = new LocalWorld(4, OPTIONS.withBackend(Backend.TCP)); Arena arena = Arena.ofShared()) {
            w.run((rank, g) -> {
                int[] members = rank % 2 == 0 ? new int[] {0, 2} : new int[] {1, 3};
                try (ProcessGroup sub = g.subgroup(members)) {
                    assertEquals(2, sub.size());
                    assertEquals(rank / 2, sub.rank());
                    MemorySegment b = arena.allocate(4);
                    Buffers.set(b, DataType.I32, 0, rank);
                    sub.allreduce(b, DataType.I32, ReduceOp.SUM).await(T);
                    assertEquals(rank % 2 == 0 ? 2 : 4, Buffers.get(b, DataType.I32, 0));
                }
                return null;
            });
        }
    }

    @Test
    void ranksOnTwoNodesGetTheHierarchicalAllreduce() throws Exception {
        try (LocalWorld w = new LocalWorld(4, OPTIONS, r -> r / 2); Arena arena = Arena.ofShared()) {
            assertEquals(Backend.HIERARCHICAL, w.group(0).backend());
            w.run((rank, g) -> {
                for (ReduceOp op : ReduceOp.values()) {
                    for (DataType dt : new DataType[] {DataType.F32, DataType.I64, DataType.BF16}) {
                        MemorySegment b = Buffers.filled(arena, dt, 20_001, rank);
                        g.allreduce(b, dt, op).await(T);
                        for (long i = 0; i < 20_001; i += 997) {
                            assertEquals(Buffers.expected(dt, op, 4, i), Buffers.get(b, dt, i), op + " " + dt + " at " + i);
                        }
                    }
                }
                MemorySegment all = arena.allocate(4 * 4L);
                MemorySegment mine = Buffers.filled(arena, DataType.I32, 1, rank);
                g.allgather(mine, all, DataType.I32).await(T);
                for (int j = 0; j < 4; j++) {
                    assertEquals(Buffers.value(j, 0), Buffers.get(all, DataType.I32, j));
                }
                g.barrier().await(T);
                return null;
            });
        }
    }

    @Test
    void ranksSplitUnevenlyOverNodesFallBackToTcp() throws Exception {
        try (LocalWorld w = new LocalWorld(3, OPTIONS, r -> r == 0 ? 0 : 1)) {
            assertEquals(Backend.TCP, w.group(0).backend());
        }
    }
}
