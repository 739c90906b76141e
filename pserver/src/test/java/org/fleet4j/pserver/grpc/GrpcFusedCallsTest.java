package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.grpc.proto.StatsRequest;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.pserver.worker.PsWorker;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;

/** tensor_fuse over grpc: PullMany and PushMany carry a step to a server in one call each, and equal the single calls. */
class GrpcFusedCallsTest {
    private static final int DIM = Shards.DIM;
    private static final PsOptions NO_TOKEN = new PsOptions("127.0.0.1:0", Duration.ofSeconds(10), null);

    @Test
    void pullManyAndPushManyEqualTheSingleCallsBitForBitInOneCallEach() throws Exception {
        TableShard served = Shards.shard();
        TableShard direct = Shards.shard();
        Random random = new Random(5);
        try (PsServer server = Shards.GRPC.serve(served, NO_TOKEN);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), NO_TOKEN)) {
            for (int step = 0; step < 3; step++) {
                long[] raw = {3, -8, 1L << 40, 17 + step};
                MemorySegment ids = Shards.ids(raw);
                MemorySegment w = Shards.floats(64 * DIM);
                MemorySegment b = Shards.floats(DIM);
                MemorySegment emb = Shards.floats((long) raw.length * DIM);
                MemorySegment wide = Shards.floats(raw.length);
                c.pullMany(new PsBatch(List.of(new PsBatch.Dense("fc.w", 0, w), new PsBatch.Dense("fc.b", 0, b)),
                        List.of(new PsBatch.Sparse("emb", ids, raw.length, emb),
                                new PsBatch.Sparse("wide", ids, raw.length, wide))));
                assertArrayEquals(Shards.pullDense(direct, "fc.w", 64 * DIM), floats(w), "fc.w " + step);
                assertArrayEquals(Shards.pullDense(direct, "fc.b", DIM), floats(b), "fc.b " + step);
                assertArrayEquals(Shards.pullSparse(direct, "emb", ids, raw.length, DIM), floats(emb));
                assertArrayEquals(Shards.pullSparse(direct, "wide", ids, raw.length, 1), floats(wide));

                MemorySegment gw = Shards.randomFloats(random, 64 * DIM);
                MemorySegment gb = Shards.randomFloats(random, DIM);
                MemorySegment gEmb = Shards.randomFloats(random, (long) raw.length * DIM);
                MemorySegment gWide = Shards.randomFloats(random, raw.length);
                c.pushMany(new PsBatch(List.of(new PsBatch.Dense("fc.w", 0, gw), new PsBatch.Dense("fc.b", 0, gb)),
                        List.of(new PsBatch.Sparse("emb", ids, raw.length, gEmb),
                                new PsBatch.Sparse("wide", ids, raw.length, gWide))));
                direct.pushDense("fc.w", 0, gw);
                direct.pushDense("fc.b", 0, gb);
                direct.pushSparse("emb", ids, raw.length, gEmb);
                direct.pushSparse("wide", ids, raw.length, gWide);
            }
            assertEquals(Map.of("Hello", 1L, "PullMany", 3L, "PushMany", 3L), calls(server.endpoint()));
        }
    }

    @Test
    void aFusedTrainingStepIsOnePullAndOnePushPerServer() throws Exception {
        int steps = 4;
        Map<String, Long> fused = trainOverTwoServers(true, steps).getFirst();
        assertEquals(Map.of("Hello", 1L, "PullMany", (long) steps, "PushMany", (long) steps), fused);
        Map<String, Long> unfused = trainOverTwoServers(false, steps).getFirst();
        assertTrue(unfused.get("PullSparse") >= steps * 3L && unfused.get("PushDense") >= steps,
                "without tensor_fuse a step makes a call per table and block: " + unfused);
    }

    /** Calls per method seen by each of 2 grpc servers after {@code steps} sync steps of one worker. */
    private static List<Map<String, Long>> trainOverTwoServers(boolean fuse, int steps) throws Exception {
        SmallWideDeep net = SmallWideDeep.build(40, 4, new SGD(0.2));
        PsPlan plan = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false)
                .tensorFuse(fuse), 2, 16);
        List<PsServer> servers = new ArrayList<>();
        List<PsConnection> connections = new ArrayList<>();
        PsTransport grpc = Shards.GRPC;
        try {
            for (int s = 0; s < 2; s++) {
                servers.add(grpc.serve(plan.shard(s), NO_TOKEN));
                connections.add(grpc.connect(servers.get(s).endpoint(), NO_TOKEN));
            }
            try (PsWorker worker = new PsWorker(plan, connections, NO_TOKEN.deadline());
                 Executor exe = new Executor(ExecutorOptions.defaults(),
                         ExecContext.builder().service(PsCommunicator.class, worker).build())) {
                Scope scope = new Scope();
                exe.run(plan.workerStartup(), scope);
                Random data = new Random(3);
                for (int step = 0; step < steps; step++) {
                    exe.run(plan.workerMain(), scope, net.batch(data, 16, 40), List.of(net.loss().name()));
                }
            }
            List<Map<String, Long>> calls = new ArrayList<>();
            for (PsServer s : servers) {
                calls.add(calls(s.endpoint()));
            }
            return calls;
        } finally {
            servers.forEach(PsServer::close);
        }
    }

    /** The server's call counts by method, the Stats call itself left out. */
    static Map<String, Long> calls(String endpoint) throws InterruptedException {
        try (RawClient raw = new RawClient(endpoint)) {
            Map<String, Long> calls = new java.util.TreeMap<>(raw.stub(null).stats(StatsRequest.getDefaultInstance())
                    .getCallsMap());
            calls.remove("Stats");
            return calls;
        }
    }

    private static float[] floats(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_FLOAT);
    }
}
