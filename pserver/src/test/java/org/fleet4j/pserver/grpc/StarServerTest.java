package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.pserver.worker.PsWorker;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.Protocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * star_server and star_server_lite (package org.fleet4j.pserver.star, on this package's service): sync training equals
 * grpc's to the bit, one pull and one push per server per step, lite's one step of staleness, mixed protocols.
 */
class StarServerTest {
    private static final PsOptions NO_TOKEN = new PsOptions("127.0.0.1:0", Duration.ofSeconds(10), null);
    private static final long VOCAB = 40;
    private static final int STEPS = 6;

    @Test
    void starServerTrainsBitForBitAsGrpcInSyncModeWithOnePullAndOnePushPerServerPerStep() throws Exception {
        Run grpc = train(Protocol.GRPC);
        Run star = train(Protocol.STAR_SERVER);
        assertArrayEquals(grpc.losses, star.losses, "loss of every step");
        grpc.params.forEach((name, values) -> assertArrayEquals(values, star.params.get(name), name));
        for (Map<String, Long> calls : star.calls) {
            assertEquals(Map.of("Hello", 1L, "PullMany", (long) STEPS + 1, "PushMany", (long) STEPS), calls,
                    "a step's pull and push, and the final read of the dense tables");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"star_server", "star_server_lite"})
    void starServerReadsItsOwnWritesAndLiteReadsOneStepStale(String protocol) {
        PsTransport transport = PsTransport.forProtocol(protocol);
        try (PsServer server = transport.serve(Shards.shard(), NO_TOKEN);
             PsConnection c = transport.connect(server.endpoint(), NO_TOKEN)) {
            MemorySegment ids = Shards.ids(5, 9);
            MemorySegment ones = Shards.floats(2);
            ones.fill((byte) 0);
            ones.setAtIndex(ValueLayout.JAVA_FLOAT, 0, 1f);
            ones.setAtIndex(ValueLayout.JAVA_FLOAT, 1, 1f);
            float[] seen = new float[3];
            for (int step = 0; step < 3; step++) {
                MemorySegment rows = Shards.floats(2);
                c.pullMany(new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, 2, rows))));
                seen[step] = rows.getAtIndex(ValueLayout.JAVA_FLOAT, 0);
                c.pushMany(new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, 2, ones))));
            }
            // "wide": SGD with learning rate 1 from 0, so a row is minus the pushes applied before the read
            float[] expected = protocol.equals("star_server") ? new float[]{0, -1, -2} : new float[]{0, 0, -1};
            assertArrayEquals(expected, seen, protocol + ": what step k's pull saw of the pushes before it");
            MemorySegment after = Shards.floats(2);
            c.pullSparse("wide", ids, 2, after);
            assertEquals(-3f, after.getAtIndex(ValueLayout.JAVA_FLOAT, 0), "any other call sends a held push first");
        }
    }

    @Test
    void theDryRunSaysLiteReadsOneStepStale() {
        SmallWideDeep net = SmallWideDeep.build(VOCAB, 4, new SGD(0.2));
        String lite = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false)
                .protocol(Protocol.STAR_SERVER_LITE), 1).describe();
        assertTrue(lite.contains("transport: protocol star_server_lite, tensor_fuse: one pull (pull_fused, at the step's"
                + " start) and one push (push_fused, after backward) per server per step"), lite);
        assertTrue(lite.contains("a worker reads values one step stale"), lite);
    }

    @Test
    void mixedProtocolsFailAtConnectNamingBoth() {
        PsTransport star = PsTransport.forProtocol("star_server");
        PsTransport lite = PsTransport.forProtocol("star_server_lite");
        try (PsServer server = star.serve(Shards.shard(), NO_TOKEN)) {
            PsException e = assertThrows(PsException.class, () -> Shards.GRPC.connect(server.endpoint(), NO_TOKEN));
            assertEquals("connect on parameter server " + server.endpoint() + " failed: parameter server "
                    + server.endpoint() + " speaks protocol 'star_server', the worker 'grpc'; give every process of the"
                    + " job the same strategy protocol", e.getMessage());
        }
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), NO_TOKEN)) {
            PsException e = assertThrows(PsException.class, () -> lite.connect(server.endpoint(), NO_TOKEN));
            assertTrue(e.getMessage().contains("speaks protocol 'grpc', the worker 'star_server_lite'"), e.getMessage());
        }
    }

    private record Run(double[] losses, Map<String, float[]> params, List<Map<String, Long>> calls) {
    }

    /** Sync SGD, one worker over 2 servers of {@code protocol}, on loopback. */
    private static Run train(Protocol protocol) throws Exception {
        SmallWideDeep net = SmallWideDeep.build(VOCAB, 4, new SGD(0.2));
        PsPlan plan = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false)
                .protocol(protocol), 2, 16);
        PsTransport transport = PsTransport.forProtocol(protocol.spelling());
        List<PsServer> servers = new ArrayList<>();
        List<PsConnection> connections = new ArrayList<>();
        try {
            for (int s = 0; s < 2; s++) {
                servers.add(transport.serve(plan.shard(s), NO_TOKEN));
                connections.add(transport.connect(servers.get(s).endpoint(), NO_TOKEN));
            }
            double[] losses = new double[STEPS];
            Map<String, float[]> params = new LinkedHashMap<>();
            try (PsWorker worker = new PsWorker(plan, connections, NO_TOKEN.deadline());
                 Executor exe = new Executor(ExecutorOptions.defaults(),
                         ExecContext.builder().service(PsCommunicator.class, worker).build())) {
                Scope scope = new Scope();
                exe.run(plan.workerStartup(), scope);
                Random data = new Random(3);
                for (int step = 0; step < STEPS; step++) {
                    losses[step] = exe.run(plan.workerMain(), scope, net.batch(data, 16, VOCAB),
                            List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
                }
                List<PsCommunicator.Dense> dense = new ArrayList<>();
                for (DenseTableConfig t : plan.denseTables()) {
                    Tensor p = Tensor.zeros(DType.F32, t.shape());
                    dense.add(new PsCommunicator.Dense(t.name(), p.segment()));
                }
                worker.pullFused(dense, List.of());
                dense.forEach(d -> params.put(d.param(), d.values().toArray(ValueLayout.JAVA_FLOAT)));
            }
            List<Map<String, Long>> calls = new ArrayList<>();
            for (PsServer s : servers) {
                calls.add(GrpcFusedCallsTest.calls(s.endpoint()));
            }
            return new Run(losses, params, calls);
        } finally {
            servers.forEach(PsServer::close);
        }
    }
}
