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
import java.util.List;
import java.util.Random;
import org.fleet4j.collective.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.api.Test;

/**
 * grpc++ on loopback against grpc: the same pulls and pushes, dense and sparse, through a grpc server and a grpc++
 * server of four network threads give the same rows bit for bit, and both equal the calls on a TableShard here.
 */
class GrpcppRoundTripTest {
    private static final int DIM = Shards.DIM;

    @Test
    void pullsAndPushesEqualTheGrpcProtocolsBitForBit() {
        TableShard overGrpc = Shards.shard();
        TableShard overGrpcpp = Shards.shard();
        TableShard direct = Shards.shard();
        PsOptions options = Shards.options(JobToken.random());
        Random random = new Random(11);
        try (PsServer grpcServer = Shards.GRPC.serve(overGrpc, options);
             GrpcppServer server = Loopback.serve(overGrpcpp, options, new NetworkSettings(4, false, false));
             PsConnection grpc = Shards.GRPC.connect(grpcServer.endpoint(), options);
             PsConnection fast = Loopback.connect(server, options)) {
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
            direct.pushSparse("emb", ids, n, grads);
            MemorySegment out = arena.allocate((long) n * DIM * Float.BYTES);
            c.pullSparse("emb", ids, n, out);
            assertArrayEquals(pullSparse(direct, "emb", ids, n, DIM), out.toArray(ValueLayout.JAVA_FLOAT),
                    "rows put back on the caller's thread, in a confined arena's memory");
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
