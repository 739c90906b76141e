package org.fleet4j.collective;

import org.fleet4j.collective.shm.ShmFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ProcessGroup#registeredBuffer}: on shm an allreduce of registered memory reads and writes the other ranks'
 * copies directly; these tests check that it gives the same results as ordinary memory in every case, including
 * ranks that mix registered and ordinary memory, and that it fails like the slots do.
 */
class RegisteredBufferTest {
    private static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(30))
            .withBackend(Backend.SHM);
    private static final long[] COUNTS = {0, 1, 7, 5_003, 300_007};
    private static final Duration T = Duration.ofSeconds(60);

    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {2, 3, 4})
    void everyDtypeOpAndSizeMatchesTheReference(int world) throws Exception {
        try (LocalWorld w = new LocalWorld(world, OPTIONS)) {
            w.run((rank, g) -> {
                for (DataType dt : DataType.values()) {
                    for (long count : COUNTS) {
                        // 3 spare elements each side: the allreduced buffer is a slice inside the registered one
                        MemorySegment whole = g.registeredBuffer(dt + " x " + count, (count + 6) * dt.byteSize());
                        MemorySegment buf = whole.asSlice(3L * dt.byteSize(), count * dt.byteSize());
                        for (ReduceOp op : ReduceOp.values()) {
                            fill(buf, dt, count, rank, 0);
                            g.allreduce(buf, dt, op).await(T);
                            verify(buf, dt, count, op, world, 0, dt + " " + op + " x " + count + " on rank " + rank);
                        }
                        for (int i = 0; i < 3; i++) {
                            assertEquals(0.0, Buffers.get(whole, dt, i), "below the slice untouched");
                            assertEquals(0.0, Buffers.get(whole, dt, count + 3 + i), "above the slice untouched");
                        }
                    }
                }
                return null;
            });
        }
    }

    /** Training reuses one bucket every step: each step's result must be that step's, never a stale or torn one. */
    @Test
    void manyStepsOnOneBufferNeverSeeStaleValues() throws Exception {
        long count = 100_003;
        try (LocalWorld w = new LocalWorld(2, OPTIONS)) {
            w.run((rank, g) -> {
                MemorySegment buf = g.registeredBuffer("bucket", count * 4);
                for (int step = 0; step < 40; step++) {
                    fill(buf, DataType.F32, count, rank, step);
                    g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                    verify(buf, DataType.F32, count, ReduceOp.SUM, 2, step, "step " + step + " on rank " + rank);
                }
                return null;
            });
        }
    }

    /** Rank 0 passes registered memory, the others ordinary memory or another offset: all fall back to the slots. */
    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {2, 3})
    void ranksThatDisagreeOnTheMemoryStillReduceCorrectly(int world) throws Exception {
        long count = 70_001;
        try (LocalWorld w = new LocalWorld(world, OPTIONS); Arena arena = Arena.ofShared()) {
            w.run((rank, g) -> {
                MemorySegment reg = g.registeredBuffer("mixed", (count + 1) * 4);
                MemorySegment[] tries = {
                    rank == 0 ? reg.asSlice(0, count * 4) : Buffers.filled(arena, DataType.F32, count, rank),
                    reg.asSlice(rank == 1 ? 4 : 0, count * 4),
                    reg.asSlice(0, count * 4),
                };
                for (int k = 0; k < tries.length; k++) {
                    for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.AVG)) {
                        fill(tries[k], DataType.F32, count, rank, k);
                        g.allreduce(tries[k], DataType.F32, op).await(T);
                        verify(tries[k], DataType.F32, count, op, world, k, "try " + k + " " + op + " on rank " + rank);
                    }
                }
                return null;
            });
        }
    }

    @Test
    void otherOperationsWorkOnRegisteredMemoryToo() throws Exception {
        long count = 20_001;
        try (LocalWorld w = new LocalWorld(3, OPTIONS)) {
            w.run((rank, g) -> {
                MemorySegment buf = g.registeredBuffer("broadcast and reduce", count * 8);
                fill(buf, DataType.F64, count, rank, 0);
                g.broadcast(buf, DataType.F64, 2).await(T);
                for (long i = 0; i < count; i++) {
                    assertEquals(Buffers.value(2, i), Buffers.get(buf, DataType.F64, i), "broadcast element " + i);
                }
                fill(buf, DataType.F64, count, rank, 0);
                g.reduce(buf, DataType.F64, ReduceOp.MAX, 1).await(T);
                for (long i = 0; i < count; i++) {
                    double want = rank == 1 ? Buffers.expected(DataType.F64, ReduceOp.MAX, 3, i) : Buffers.value(rank, i);
                    assertEquals(want, Buffers.get(buf, DataType.F64, i), "reduce element " + i + " on rank " + rank);
                }
                return null;
            });
        }
    }

    @Test
    void ranksThatRegisterDifferentBuffersFailNamingBoth() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withTimeout(Duration.ofSeconds(10)))) {
            List<Throwable> failures = w.failures((rank, g) -> g.registeredBuffer(rank == 0 ? "grads" : "moments", 4096));
            for (Throwable f : failures) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, f);
                assertTrue(e.getMessage().contains("rank 0 registered 'grads'") && e.getMessage().contains("rank 1 'moments'")
                        && e.getMessage().contains("same order"), e.getMessage());
            }
        }
    }

    @Test
    void aRankThatNeverArrivesIsNamedAfterTheTimeout() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withTimeout(Duration.ofSeconds(2)))) {
            List<Throwable> failures = w.failures((rank, g) -> {
                MemorySegment buf = g.registeredBuffer("bucket", 1 << 20);
                if (rank == 0) {
                    g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                }
                return null;
            });
            assertNotNull(failures.get(0), "rank 0 waited for rank 1, which never came");
            assertTrue(failures.get(0).getMessage().contains("ranks [1] did not take part"), failures.get(0).getMessage());
            assertNull(failures.get(1));
        }
    }

    @Test
    void registeredMemoryStartsZeroedAndItsFilesAreUnlinked() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS)) {
            w.run((rank, g) -> {
                MemorySegment buf = g.registeredBuffer("zeroed", 10_000);
                assertEquals(10_000, buf.byteSize());
                for (long i = 0; i < 10_000; i++) {
                    assertEquals(0, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i));
                }
                assertEquals(0, g.registeredBuffer("empty", 0).byteSize());
                return null;
            });
            assertEquals(List.of(), filesOfThisProcess(), "every rank mapped it, so rank 0 unlinked the file");
        }
    }

    @Test
    void badArgumentsAreRejectedBeforeAnyRankWaits() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS)) {
            ProcessGroup g = w.group(0);
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.registeredBuffer("b", -1))
                    .getMessage().contains("-1 bytes"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.registeredBuffer(" ", 8))
                    .getMessage().contains("non-empty"));
        }
    }

    /** Backends without shared memory hand out ordinary memory, on which every operation works as usual. */
    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {1, 2})
    void tcpAndWorldsOfOneGiveOrdinaryMemory(int world) throws Exception {
        long count = 5_003;
        try (LocalWorld w = new LocalWorld(world, OPTIONS.withBackend(world == 1 ? Backend.SHM : Backend.TCP))) {
            w.run((rank, g) -> {
                MemorySegment buf = g.registeredBuffer("bucket", count * 4);
                fill(buf, DataType.F32, count, rank, 0);
                g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                verify(buf, DataType.F32, count, ReduceOp.SUM, world, 0, "rank " + rank);
                return null;
            });
        }
    }

    private static List<Path> filesOfThisProcess() throws IOException {
        String mine = "fleet4j-" + ProcessHandle.current().pid() + "-";
        try (Stream<Path> files = Files.list(ShmFiles.directory())) {
            return files.filter(f -> f.getFileName().toString().startsWith(mine)).toList();
        }
    }

    /** Buffers.value shifted by {@code step}, so that consecutive steps hold different values. */
    private static void fill(MemorySegment s, DataType dt, long count, int rank, int step) {
        for (long i = 0; i < count; i++) {
            Buffers.set(s, dt, i, Buffers.value(rank, i + step));
        }
    }

    private static void verify(MemorySegment s, DataType dt, long count, ReduceOp op, int world, int step, String what) {
        for (long i = 0; i < count; i++) {
            double want = Buffers.expected(dt, op, world, i + step);
            double got = Buffers.get(s, dt, i);
            if (got != want) {
                assertEquals(want, got, what + ", element " + i);
            }
        }
    }
}
