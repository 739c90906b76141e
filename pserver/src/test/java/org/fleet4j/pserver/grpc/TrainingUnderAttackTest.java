package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.fleet4j.cluster.JobToken;
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
import org.fleet4j.pserver.grpcpp.EndpointMap;
import org.fleet4j.pserver.grpcpp.GrpcppTransport;
import org.fleet4j.pserver.grpcpp.NetworkSettings;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A live server attacked while it trains: 2 workers x 1 server in sync mode (SGD), while a stranger keeps writing
 * garbage to the server's ports, holds a silent connection open, and connects with another job's token. The job's
 * losses and final tables equal those of a clean run of the same job to the bit (with two workers the server's sum of
 * their gradients does not depend on their order), and every attack was made while the workers trained.
 */
class TrainingUnderAttackTest {
    private static final long VOCAB = 40;
    private static final int WORKERS = 2;
    private static final int STEPS = 30;
    private static final int BATCH = 8;

    private record Run(double[][] losses, Map<String, float[]> tables) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc", "star_server", "grpc++"})
    void aJobAttackedWhileItTrainsEndsAsACleanRunDoes(String protocol) throws Exception {
        Run clean = train(protocol, false);
        Run attacked = train(protocol, true);
        for (int w = 0; w < WORKERS; w++) {
            assertArrayEquals(clean.losses()[w], attacked.losses()[w], "worker " + w + "'s loss of every step");
        }
        assertEquals(clean.tables().keySet(), attacked.tables().keySet());
        clean.tables().forEach((name, values) -> assertArrayEquals(values, attacked.tables().get(name), name));
    }

    private static Run train(String protocol, boolean attack) throws Exception {
        SmallWideDeep net = SmallWideDeep.build(VOCAB, 4, new SGD(0.2));
        PsPlan plan = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false)
                .protocol(Protocol.of(protocol)), 1, 16);
        JobToken token = JobToken.random();
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(30), token);
        TableShard shard = plan.shard(0);
        shard.aggregateSteps(WORKERS);
        boolean grpcpp = protocol.equals(GrpcppTransport.PROTOCOL);
        NetworkSettings two = new NetworkSettings(2, false, false);
        PsServer server = grpcpp ? new GrpcppTransport(EndpointMap.empty(), two, null).serve(shard, options)
                : PsTransport.forProtocol(protocol).serve(shard, options);
        List<String> ports = new ArrayList<>(List.of(server.endpoint()));
        PsTransport workers = PsTransport.forProtocol(protocol);
        if (grpcpp) {
            String data = GrpcppTransport.dataEndpointOf(server);
            ports.add(data);
            workers = new GrpcppTransport(EndpointMap.parse(List.of(server.endpoint() + "=" + data), "test"), null, two);
        }
        AtomicBoolean training = new AtomicBoolean(true);
        Attacker attacker = attack ? new Attacker(ports, workers, server.endpoint(), training) : null;
        try {
            if (attacker != null) {
                assertTrue(attacker.firstRound.await(60, TimeUnit.SECONDS), "the attacker made one round of attacks");
            }
            PsTransport transport = workers;
            double[][] losses = new double[WORKERS][];
            // a thread per worker: sync workers wait for each other at the server's barrier
            ExecutorService threads = Executors.newFixedThreadPool(WORKERS);
            try {
                List<Future<double[]>> runs = new ArrayList<>();
                for (int w = 0; w < WORKERS; w++) {
                    int me = w;
                    runs.add(threads.submit(() -> trainWorker(net, plan, transport, server.endpoint(), options, me)));
                }
                for (int w = 0; w < WORKERS; w++) {
                    losses[w] = runs.get(w).get(120, TimeUnit.SECONDS);
                }
            } finally {
                threads.shutdownNow();
            }
            training.set(false);
            if (attacker != null) {
                attacker.thread.join(60_000);
                assertTrue(attacker.failure.get() == null, () -> "the attacker failed: " + attacker.failure.get());
                assertTrue(attacker.roundsWhileTraining.get() >= 2, "attack rounds while the workers trained: "
                        + attacker.roundsWhileTraining.get());
            }
            try (PsConnection c = transport.connect(server.endpoint(), options)) {
                return new Run(losses, tables(plan, c));
            }
        } finally {
            training.set(false);
            server.close();
        }
    }

    private static double[] trainWorker(SmallWideDeep net, PsPlan plan, PsTransport transport, String endpoint,
                                        PsOptions options, int worker) {
        PsConnection c = transport.connect(endpoint, options);
        try (PsWorker ps = new PsWorker(plan, List.of(c), options.deadline(), worker, WORKERS);
             Executor exe = new Executor(ExecutorOptions.defaults(),
                     ExecContext.builder().service(PsCommunicator.class, ps).build())) {
            Scope scope = new Scope();
            exe.run(plan.workerStartup(), scope);
            Random data = new Random(100 + worker);
            double[] losses = new double[STEPS];
            for (int s = 0; s < STEPS; s++) {
                losses[s] = exe.run(plan.workerMain(), scope, net.batch(data, BATCH, VOCAB), List.of(net.loss().name()))
                        .get(net.loss().name()).getFloat(0);
            }
            return losses;
        }
    }

    private static Map<String, float[]> tables(PsPlan plan, PsConnection c) {
        Map<String, float[]> tables = new LinkedHashMap<>();
        for (DenseTableConfig t : plan.denseTables()) {
            tables.put(t.name(), Shards.pullDense(c, t.name(), t.numel()));
        }
        long[] all = new long[(int) VOCAB];
        for (int id = 0; id < VOCAB; id++) {
            all[id] = id;
        }
        for (SparseTableConfig t : plan.sparseTables()) {
            Tensor rows = Tensor.zeros(DType.F32, VOCAB, t.dim());
            c.pullSparse(t.name(), Shards.ids(all), (int) VOCAB, rows.segment());
            tables.put(t.name(), rows.segment().toArray(ValueLayout.JAVA_FLOAT));
        }
        return tables;
    }

    /**
     * Until training ends, round after round: garbage to every port (dropped by the server), another job's token at
     * connect (refused); a silent connection to every port stays open throughout.
     */
    private static final class Attacker {
        final CountDownLatch firstRound = new CountDownLatch(1);
        final AtomicInteger roundsWhileTraining = new AtomicInteger();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread thread;

        Attacker(List<String> ports, PsTransport transport, String endpoint, AtomicBoolean training) {
            thread = Thread.ofPlatform().name("attacker").start(() -> {
                List<Socket> silent = new ArrayList<>();
                try {
                    for (String port : ports) {
                        silent.add(GrpcFaultTest.connect(port));
                    }
                    byte[] garbage = new byte[16 * 1024];
                    Random r = new Random(9);
                    PsOptions stranger = new PsOptions("127.0.0.1:0", Duration.ofSeconds(30), JobToken.random());
                    while (training.get()) {
                        for (String port : ports) {
                            r.nextBytes(garbage);
                            try (Socket s = GrpcFaultTest.connect(port)) {
                                s.getOutputStream().write(garbage);
                            } catch (IOException droppedWhileWriting) {
                                // the server may close the connection before all of it is written
                            }
                        }
                        PsException refused = assertThrows(PsException.class,
                                () -> transport.connect(endpoint, stranger).close());
                        assertTrue(refused.getMessage().contains("does not hold this job's token"),
                                refused.getMessage());
                        firstRound.countDown();
                        if (training.get()) {
                            roundsWhileTraining.incrementAndGet();
                        }
                    }
                } catch (Throwable e) {
                    failure.set(e);
                    firstRound.countDown();
                } finally {
                    for (Socket s : silent) {
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // closing our own socket
                        }
                    }
                }
            });
        }
    }
}
