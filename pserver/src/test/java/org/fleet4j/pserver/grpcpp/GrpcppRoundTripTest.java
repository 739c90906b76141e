package org.fleet4j.pserver.grpcpp;

import static org.fleet4j.pserver.grpc.Shards.pullDense;
import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * grpc++ on loopback against grpc: the same pulls and pushes, dense and sparse, through a grpc server and a grpc++
 * server of four network threads give the same rows bit for bit, and both equal the calls on a TableShard here.
 */
class GrpcppRoundTripTest {
    private static final int DIM = Shards.DIM;

    @ParameterizedTest(name = "worker network threads: {0}")
    @ValueSource(ints = {2, 0})
    void pullsAndPushesEqualTheGrpcProtocolsBitForBit(int workerThreads) {
        TableShard overGrpc = Shards.shard();
        TableShard overGrpcpp = Shards.shard();
        TableShard direct = Shards.shard();
        PsOptions options = Shards.options(JobToken.random());
        Random random = new Random(11);
        try (PsServer grpcServer = Shards.GRPC.serve(overGrpc, options);
             GrpcppServer server = Loopback.serve(overGrpcpp, options, new NetworkSettings(4, false, false));
             PsConnection grpc = Shards.GRPC.connect(grpcServer.endpoint(), options);
             PsConnection fast = Loopback.connect(server, options, workerThreads)) {
            assertEquals(4, ((GrpcppConnection) fast).threads(), "one data connection per server network thread");
            for (int step = 0; step < 6; step++) {
                long[] raw = new long[200];
                for (int i = 0; i < raw.length; i++) {
                    raw[i] = random.nextInt(300) - 100 + (random.nextBoolean() ? 0 : 1L << 40);
                }
                MemorySegment ids = Shards.ids(raw);
                float[] expected = pullSparse(direct, "emb", ids, raw.length, DIM);
                assertArrayEquals(expected, pullSparse(grpc, "emb", ids, raw.length, DIM), "grpc, step " + step);
                assertArrayEquals(expected, pullSparse(fast, "emb", ids, raw.length, DIM), "grpc++, step " + step);
                MemorySegment grads = Shards.randomFloats(random, (long) raw.length * DIM);
                direct.pushSparse("emb", ids, raw.length, grads);
                grpc.pushSparse("emb", ids, raw.length, grads);
                fast.pushSparse("emb", ids, raw.length, grads);
                MemorySegment wide = Shards.randomFloats(random, raw.length);
                direct.pushSparse("wide", ids, raw.length, wide);
                grpc.pushSparse("wide", ids, raw.length, wide);
                fast.pushSparse("wide", ids, raw.length, wide);
                for (String param : List.of("fc.w", "fc.b")) {
                    long numel = direct.denseBlock(param, 0).spec().numel();
                    float[] dense = pullDense(direct, param, numel);
                    assertArrayEquals(dense, pullDense(grpc, param, numel), param + " over grpc, step " + step);
                    assertArrayEquals(dense, pullDense(fast, param, numel), param + " over grpc++, step " + step);
                    MemorySegment g = Shards.randomFloats(random, numel);
                    direct.pushDense(param, 0, g);
                    grpc.pushDense(param, 0, g);
                    fast.pushDense(param, 0, g);
                }
            }
            long[] all = new long[500];
            for (int i = 0; i < all.length; i++) {
                all[i] = i - 100 + (i % 2 == 0 ? 0 : 1L << 40);
            }
            MemorySegment ids = Shards.ids(all);
            assertArrayEquals(pullSparse(grpc, "emb", ids, all.length, DIM), pullSparse(fast, "emb", ids, all.length,
                    DIM));
            assertArrayEquals(pullSparse(grpc, "wide", ids, all.length, 1), pullSparse(fast, "wide", ids, all.length,
                    1));
            assertArrayEquals(pullDense(grpc, "fc.w", 64 * DIM), pullDense(fast, "fc.w", 64 * DIM));
            assertEquals(grpc.stats(), fast.stats(), "keys and bytes per table, over the control port");
        }
    }

    @Test
    void buffersConfinedToTheCallersThreadServe() {
        PsOptions options = Shards.options(JobToken.random());
        TableShard direct = Shards.shard();
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(2, false, false));
             PsConnection c = Loopback.connect(server, options);
             Arena arena = Arena.ofConfined()) {
            int n = 64;
            MemorySegment ids = arena.allocate((long) n * Long.BYTES);
            MemorySegment grads = arena.allocate((long) n * DIM * Float.BYTES);
            for (int i = 0; i < n; i++) {
                ids.setAtIndex(ValueLayout.JAVA_LONG, i, i * 31L);
            }
            for (int i = 0; i < n * DIM; i++) {
                grads.setAtIndex(ValueLayout.JAVA_FLOAT, i, i % 5 - 2);
            }
            c.pushSparse("emb", ids, n, grads);
            // the reference shard's owner threads read its buffers, so they get copies not confined to this thread
            MemorySegment sharedIds = Arena.ofAuto().allocate(ids.byteSize()).copyFrom(ids);
            direct.pushSparse("emb", sharedIds, n, Arena.ofAuto().allocate(grads.byteSize()).copyFrom(grads));
            MemorySegment out = arena.allocate((long) n * DIM * Float.BYTES);
            c.pullSparse("emb", ids, n, out);
            assertArrayEquals(pullSparse(direct, "emb", sharedIds, n, DIM), out.toArray(ValueLayout.JAVA_FLOAT),
                    "rows put back on the caller's thread, in a confined arena's memory");
        }
    }

    /**
     * The server's network threads are its tables' owners, split as workers route (three threads: not a power of
     * two), and a request on its owning thread runs right there: rows pushed and pulled on network thread i through
     * memory confined to thread i are applied and read there (a hand-off to any other thread fails on that memory),
     * and equal what went over the wire.
     */
    @Test
    void theNetworkThreadThatReceivesARequestAppliesIt() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        int threads = 3;
        try (GrpcppServer server = Loopback.serve(shard, options, new NetworkSettings(threads, false, false));
             PsConnection c = Loopback.connect(server, options)) {
            assertEquals(threads, shard.owners(), "one owner per network thread");
            long[] raw = new long[300];
            for (int i = 0; i < raw.length; i++) {
                raw[i] = i * 7919L - 1000;
                assertEquals(KeyHash.threadOf(raw[i], threads), shard.ownerOfSparse("emb", raw[i]),
                        "the worker's route of id " + raw[i] + " is the table's owner");
            }
            for (String param : List.of("fc.w", "fc.b")) {
                assertEquals(KeyHash.ownerOfBlock(param, 0, threads), shard.ownerOfDense(param, 0), param);
            }
            c.pushSparse("emb", Shards.ids(raw), raw.length, Shards.randomFloats(new Random(5),
                    (long) raw.length * DIM));
            float[] overTheWire = pullSparse(c, "emb", Shards.ids(raw), raw.length, DIM);
            for (int t = 0; t < threads; t++) {
                int owner = t;
                long[] mine = Arrays.stream(raw).filter(id -> KeyHash.threadOf(id, threads) == owner)
                        .toArray();
                float[] rows = server.networkThread(t).submit(() -> {
                    try (Arena confined = Arena.ofConfined()) {
                        MemorySegment ids = confined.allocate((long) mine.length * Long.BYTES);
                        MemorySegment.copy(mine, 0, ids, ValueLayout.JAVA_LONG, 0, mine.length);
                        MemorySegment zero = confined.allocate((long) mine.length * DIM * Float.BYTES);
                        assertTrue(shard.pushSparseAsync("emb", ids, mine.length, zero).isDone(),
                                "applied in place, not queued");
                        MemorySegment out = confined.allocate((long) mine.length * DIM * Float.BYTES);
                        shard.pullSparseAsync("emb", ids, mine.length, out).join();
                        return out.toArray(ValueLayout.JAVA_FLOAT);
                    }
                }).get(30, TimeUnit.SECONDS);
                for (int k = 0, i = 0; i < raw.length; i++) {
                    if (KeyHash.threadOf(raw[i], threads) == owner) {
                        assertArrayEquals(Arrays.copyOfRange(overTheWire, i * DIM, (i + 1) * DIM),
                                Arrays.copyOfRange(rows, k * DIM, ++k * DIM), "id " + raw[i]);
                    }
                }
            }
        }
    }

    @Test
    void theProtocolIsFoundByName() {
        assertEquals(GrpcppTransport.class, PsTransport.forProtocol("grpc++").getClass());
    }

    @Test
    void aGrpcWorkerIsRefusedByAGrpcppServerNamingBoth() {
        PsOptions options = Shards.options(JobToken.random());
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(1, false, false))) {
            PsException e = assertThrows(PsException.class, () -> Shards.GRPC.connect(server.endpoint(), options)
                    .close());
            assertEquals("connect on parameter server " + server.endpoint() + " failed: parameter server "
                    + server.endpoint() + " speaks protocol 'grpc++', the worker 'grpc'; give every process of the job"
                    + " the same strategy protocol", e.getMessage());
        }
    }
}
