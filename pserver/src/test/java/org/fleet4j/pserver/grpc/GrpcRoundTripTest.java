package org.fleet4j.pserver.grpc;

import static org.fleet4j.pserver.grpc.Shards.pullDense;
import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.proto.PullSparseRequest;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Calls through a real gRPC server on loopback against the same calls on a TableShard in this thread. */
class GrpcRoundTripTest {
    private static final int DIM = Shards.DIM;

    @Test
    void pullsAndPushesOverTheWireEqualDirectTableCallsBitForBit() {
        TableShard served = Shards.shard();
        TableShard direct = Shards.shard();
        PsOptions options = Shards.options(JobToken.random());
        Random random = new Random(11);
        try (PsServer server = Shards.GRPC.serve(served, options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            for (int step = 0; step < 5; step++) {
                long[] raw = new long[40];
                for (int i = 0; i < raw.length; i++) {
                    raw[i] = random.nextInt(30) - 10 + (random.nextBoolean() ? 0 : 1L << 40);
                }
                MemorySegment ids = Shards.ids(raw);
                assertArrayEquals(pullSparse(direct, "emb", ids, raw.length, DIM),
                        pullSparse(c, "emb", ids, raw.length, DIM), "emb rows at step " + step);
                MemorySegment grads = Shards.randomFloats(random, (long) raw.length * DIM);
                direct.pushSparse("emb", ids, raw.length, grads);
                MemorySegment reused = Shards.floats(2L * raw.length * DIM);
                MemorySegment.copy(grads, 0, reused, 0, grads.byteSize());
                c.pushSparse("emb", ids, raw.length, reused);
                MemorySegment wideGrads = Shards.randomFloats(random, raw.length);
                direct.pushSparse("wide", ids, raw.length, wideGrads);
                c.pushSparse("wide", ids, raw.length, wideGrads);
                for (int block = 0; block < 1; block++) {
                    for (String param : List.of("fc.w", "fc.b")) {
                        long numel = direct.denseBlock(param, block).spec().numel();
                        assertArrayEquals(pullDense(direct, param, numel), pullDense(c, param, numel),
                                param + " at step " + step);
                        MemorySegment g = Shards.randomFloats(random, numel);
                        direct.pushDense(param, block, g);
                        c.pushDense(param, block, g);
                    }
                }
            }
            long[] all = new long[60];
            for (int i = 0; i < all.length; i++) {
                all[i] = i - 10 + (i % 2 == 0 ? 0 : 1L << 40);
            }
            MemorySegment ids = Shards.ids(all);
            assertArrayEquals(pullSparse(direct, "emb", ids, all.length, DIM), pullSparse(c, "emb", ids, all.length, DIM));
            assertArrayEquals(pullSparse(direct, "wide", ids, all.length, 1), pullSparse(c, "wide", ids, all.length, 1));
            assertArrayEquals(pullDense(direct, "fc.w", 64 * DIM), pullDense(c, "fc.w", 64 * DIM));
            assertEquals(direct.stats(), c.stats(), "keys and bytes per table; no call under way, so queue depths 0");
        }
    }

    @Test
    void heapArraysServeAsBuffersToo() {
        TableShard direct = Shards.shard();
        PsOptions options = Shards.options(JobToken.random());
        long[] ids = {3, -4, 1L << 42};
        float[] grads = new float[ids.length * DIM];
        for (int i = 0; i < grads.length; i++) {
            grads[i] = (i % 7) * 0.25f - 0.5f;
        }
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            c.pushSparse("emb", MemorySegment.ofArray(ids), ids.length, MemorySegment.ofArray(grads));
            direct.pushSparse("emb", Shards.ids(ids), ids.length, MemorySegment.ofArray(grads));
            float[] rows = new float[ids.length * DIM];
            c.pullSparse("emb", MemorySegment.ofArray(ids), ids.length, MemorySegment.ofArray(rows));
            assertArrayEquals(pullSparse(direct, "emb", Shards.ids(ids), ids.length, DIM), rows);
        }
    }

    @Test
    void concurrentClientsLoseNoUpdate() throws Exception {
        int clients = 4;
        int pushes = 150;
        long[] hot = {1, 2, 3, 1L << 35, -9};
        TableShard shard = Shards.shard();
        PsOptions options = Shards.options(JobToken.random());
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try (PsServer server = Shards.GRPC.serve(shard, options)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<long[]>> sums = new ArrayList<>();
            for (int t = 0; t < clients; t++) {
                int me = t;
                sums.add(pool.submit(() -> {
                    long[] sent = new long[hot.length];
                    Random r = new Random(me);
                    try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                        start.await();
                        for (int p = 0; p < pushes; p++) {
                            int n = 1 + r.nextInt(hot.length);
                            long[] ids = new long[n];
                            MemorySegment grads = Shards.floats(n);
                            for (int i = 0; i < n; i++) {
                                int k = r.nextInt(hot.length);
                                int g = 1 + r.nextInt(3);
                                ids[i] = hot[k];
                                grads.setAtIndex(ValueLayout.JAVA_FLOAT, i, g);
                                sent[k] += g;
                            }
                            c.pushSparse("wide", Shards.ids(ids), n, grads);
                        }
                    }
                    return sent;
                }));
            }
            start.countDown();
            long[] expected = new long[hot.length];
            for (Future<long[]> f : sums) {
                long[] s = f.get(60, TimeUnit.SECONDS);
                for (int k = 0; k < hot.length; k++) {
                    expected[k] += s[k];
                }
            }
            float[] rows = pullSparse(shard, "wide", Shards.ids(hot), hot.length, 1);
            for (int k = 0; k < hot.length; k++) {
                assertEquals(-expected[k], rows[k], "id " + hot[k] + ": SGD at lr 1 from 0 is minus the gradients' sum");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void saveAndLoadThroughTheWire(@TempDir Path dir) {
        PsOptions options = Shards.options(JobToken.random());
        TableShard first = Shards.shard();
        long[] ids = {4, 5, 6, 1L << 50};
        float[] trained;
        float[] trainedDense;
        Random random = new Random(3);
        try (PsServer server = Shards.GRPC.serve(first, options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            c.pushSparse("emb", Shards.ids(ids), ids.length, Shards.randomFloats(random, (long) ids.length * DIM));
            c.pushDense("fc.w", 0, Shards.randomFloats(random, 64 * DIM));
            trained = pullSparse(c, "emb", Shards.ids(ids), ids.length, DIM);
            trainedDense = pullDense(c, "fc.w", 64 * DIM);
            c.save(dir, SaveIdentity.fresh("test", 1, 2));
        }
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            c.load(dir);
            assertArrayEquals(trained, pullSparse(c, "emb", Shards.ids(ids), ids.length, DIM));
            assertArrayEquals(trainedDense, pullDense(c, "fc.w", 64 * DIM));
            assertEquals(List.of(ids.length), c.stats().stream().filter(t -> t.table().equals("emb"))
                    .map(t -> (int) t.keys()).toList());
            PsException missing = assertThrows(PsException.class, () -> c.load(dir.resolve("nowhere")));
            assertTrue(missing.getMessage().contains("load(" + dir.resolve("nowhere") + ") on parameter server "
                    + server.endpoint()), missing.getMessage());
            assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        }
    }

    @Test
    void anUnknownTableIsAnErrorNamingItAndTheServer() {
        PsOptions options = Shards.options(JobToken.random());
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            PsException e = assertThrows(PsException.class,
                    () -> c.pullSparse("clicks", Shards.ids(1, 2), 2, Shards.floats(2 * DIM)));
            assertTrue(e.getMessage().startsWith("pullSparse(clicks, 2 ids) on parameter server " + server.endpoint()
                    + " failed: server 0 has no sparse table clicks; its sparse tables are [emb, wide]"), e.getMessage());
            PsException dense = assertThrows(PsException.class, () -> c.pullDense("fc.w", 3, Shards.floats(64 * DIM)));
            assertTrue(dense.getMessage().contains("does not hold block 3 of dense table fc.w"), dense.getMessage());
            PsException size = assertThrows(PsException.class,
                    () -> c.pushDense("fc.b", 0, Shards.floats(DIM - 1)));
            assertEquals("pushDense(fc.b, block 0) for parameter server " + server.endpoint() + ": the gradient buffer"
                    + " holds 60 bytes, 64 are needed", size.getMessage());
            assertEquals(2 * DIM, pullSparse(c, "emb", Shards.ids(1, 2), 2, DIM).length, "the server still serves");
        }
    }

    @Test
    void aServerWithoutATokenChecksTheSizesOfWhatAnyClientSends() throws Exception {
        PsOptions options = Shards.options(null);
        TableShard shard = Shards.shard();
        try (PsServer server = Shards.GRPC.serve(shard, options);
             RawClient raw = new RawClient(server.endpoint())) {
            StatusRuntimeException odd = assertThrows(StatusRuntimeException.class, () -> raw.stub(null).pullSparse(
                    PullSparseRequest.newBuilder().setTable("emb").setIds(ByteString.copyFrom(new byte[12])).build()));
            assertEquals("INVALID_ARGUMENT: sparse table emb: the ids hold 12 bytes, not a whole number of int64",
                    odd.getMessage());
            StatusRuntimeException shortGrads = assertThrows(StatusRuntimeException.class, () -> raw.stub(null)
                    .pushSparse(PushSparseRequest.newBuilder().setTable("emb").setIds(ByteString.copyFrom(new byte[16]))
                            .setGrads(ByteString.copyFrom(new byte[4 * DIM])).build()));
            assertEquals("INVALID_ARGUMENT: sparse table emb: the gradients came as 64 bytes, expected 128 (2 ids x"
                    + " dimension 16 floats)", shortGrads.getMessage());
            assertEquals(0, shard.sparseTable("emb").keys(), "nothing was applied");
            try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                assertEquals(DIM, pullSparse(c, "emb", Shards.ids(5), 1, DIM).length);
            }
            PsException tokenAgainstNone = assertThrows(PsException.class,
                    () -> Shards.GRPC.connect(server.endpoint(), Shards.options(JobToken.random())).close());
            assertTrue(tokenAgainstNone.getMessage().contains("checks no job token but this worker holds one"),
                    tokenAgainstNone.getMessage());
        }
    }

    @Test
    void statsCountKeysBytesAndCallsUnderWay() {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (PsServer server = Shards.GRPC.serve(shard, options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            pullSparse(c, "emb", Shards.ids(7, 8, 9), 3, DIM);
            List<TableStats> stats = c.stats();
            assertEquals(List.of("fc.w", "fc.b", "emb", "wide"), stats.stream().map(TableStats::table).toList());
            TableStats emb = stats.get(2);
            assertEquals(new TableStats("emb", "sparse", 3, shard.sparseTable("emb").bytes(), 0), emb);
            assertEquals(64 * DIM, stats.get(0).keys());
        }
    }

    @Test
    void aWorkersStopEndsAwaitStopAndCloseLeavesNoThread() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        PsServer server = Shards.GRPC.serve(Shards.shard(), options);
        try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            assertTrue(!server.awaitStop(Duration.ofMillis(50)), "serving until a stop");
            c.stop();
            assertTrue(server.awaitStop(Duration.ofSeconds(10)), "a worker's stop ends awaitStop");
        }
        server.close();
        List<String> left = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("ps-grpc")).toList();
        assertEquals(List.of(), left, "threads of the transport left after close");
    }

    /**
     * The worker's socket takes its buffers from the process's adaptive allocator, not grpc-java's default pool of
     * 2 MiB chunks (which freed and zeroed chunks again for every multi-MiB message: docs/performance/pserver.md).
     */
    @Test
    void aWorkersSocketUsesTheTransportsAllocator() {
        PsOptions options = Shards.options(JobToken.random());
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            assertSame(GrpcTransport.BUFFERS, ((GrpcPsConnection) c).socketAllocator());
        }
    }
}
