package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fleet's server/worker API in one JVM over the real grpc transport on loopback: a server Fleet serves the tables its
 * minimize planned until the worker's stopWorker, the worker trains the user's own (rewritten) program against it, and
 * savePersistables has the server write its shard.
 */
class FleetParameterServerTest {
    private static final GroupOptions QUICK = GroupOptions.defaults().withTimeout(Duration.ofSeconds(20));
    private static final Map<String, String> TOKEN = Map.of(JobToken.ENV, JobToken.random().text());
    private static final DistributedStrategy SYNC = new DistributedStrategy().mode(Mode.PS).aSync(false);

    @TempDir
    Path work;

    @Test
    void aWorkerTrainsAgainstAServerThatServesUntilTheWorkerStopsIt() throws Exception {
        ByteArrayOutputStream serverLog = new ByteArrayOutputStream();
        Serving serving = serve(serverLog, server -> {
            PsTestNet net = PsTestNet.build();
            server.distributedOptimizer(new SGD(0.5)).minimize(net.loss());
            server.initServer(null);
        });
        List<String> endpoints = serving.endpoints();
        int port = serving.port();

        Role role = Role.single().withServerEndpoints(endpoints);
        try (Fleet worker = Fleet.init(() -> role, SYNC, QUICK, new PrintStream(new ByteArrayOutputStream()), false, TOKEN)) {
            assertTrue(worker.isWorker() && worker.isPsMode());
            PsTestNet net = PsTestNet.build();
            worker.distributedOptimizer(new SGD(0.5)).minimize(net.loss());
            List<String> ops = net.main().globalBlock().ops().stream().map(Op::type).toList();
            assertFalse(ops.contains("sgd"), "the updates moved to the server: " + ops);
            assertTrue(ops.containsAll(List.of("pull_dense", "push_dense", "send_barrier")), ops.toString());
            worker.initWorker();
            float[] losses = net.firstAndThirdLoss(worker);
            float first = losses[0];
            float last = losses[1];
            // d(mean(xw+b))/dw = mean x = (2, 3), /db = 1: each step lowers the loss by PsTestNet.LOSS_DROP_PER_STEP
            assertEquals(first - 2 * PsTestNet.LOSS_DROP_PER_STEP, last, 1e-4, "two updates applied on the server");
            Path checkpoint = work.resolve("ckpt");
            worker.savePersistables(checkpoint);
            try (var files = Files.list(checkpoint)) {
                assertFalse(files.toList().isEmpty(), "the server wrote its shard to " + checkpoint);
            }
            worker.stopWorker();
        }
        serving.done().get(20, TimeUnit.SECONDS);
        String log = serverLog.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("fleet: server 0 serves 2 dense and 0 sparse table(s) on 127.0.0.1:" + port
                + " over grpc (sync mode, 1 worker(s))"), log);
        assertTrue(log.contains("fleet: server 0 stopped by the workers"), log);
    }

    /** A dense fc and a sparse embedding: the loss reads both tables. */
    private record SparseNet(Program main, Program startup, Program test, Var x, Var ids, Var logit, Var loss) {
        static SparseNet build() {
            Program main = new Program().setRandomSeed(5);
            Program startup = new Program().setRandomSeed(5);
            Layers nn = new Layers(main, startup);
            Var x = nn.data("x", DType.F32, -1, 2);
            Var ids = nn.data("ids", DType.I64, -1, 1);
            Var emb = nn.embedding(ids, 1000, 3, true);
            Var logit = nn.fc(nn.concat(List.of(x, emb), 1), 1, null);
            Program test = main.copy();
            Var loss = nn.mean(logit);
            return new SparseNet(main, startup, test, x, ids, logit, loss);
        }

        Map<String, Tensor> feed() {
            return Map.of(x.name(), Tensor.of(new float[]{1, 2, 3, 4, -1, 0.5f}, 3, 2),
                    ids.name(), Tensor.ofLongs(new long[]{7, 123_456_789_012L, 7}, 3, 1));
        }
    }

    @Test
    void aServerStartedFromACheckpointServesTheSavedValues() throws Exception {
        Path checkpoint = work.resolve("resume");
        // a job trains two Adagrad steps, saves, and notes the loss a third step sees (its pulls read the saved state)
        float lossAtSave = serveAndRun(null, (worker, exe, scope, net) -> {
            for (int step = 0; step < 2; step++) {
                exe.run(net.main(), scope, net.feed(), List.of());
            }
            worker.savePersistables(checkpoint);
            return exe.run(net.main(), scope, net.feed(), List.of(net.loss().name())).get(net.loss().name()).getFloat(0);
        });
        // a new job whose server starts from the checkpoint: the worker's first pulls see the saved tables
        float resumed = serveAndRun(checkpoint, (worker, exe, scope, net) ->
                exe.run(net.main(), scope, net.feed(), List.of(net.loss().name())).get(net.loss().name()).getFloat(0));
        float fresh = serveAndRun(null, (worker, exe, scope, net) ->
                exe.run(net.main(), scope, net.feed(), List.of(net.loss().name())).get(net.loss().name()).getFloat(0));
        assertNotEquals(fresh, lossAtSave, "training moved the tables");
        assertEquals(lossAtSave, resumed, "the loss on the restored server's tables");
    }

    @Test
    void theInferenceModelSavedInPsModeHoldsTheServersTablesAndPredictsAsTheServersDo() throws Exception {
        Path model = work.resolve("model");
        Map<String, Tensor> batch = Map.of("x", Tensor.of(new float[]{1, 2, 3, 4, -1, 0.5f, 2, 2}, 4, 2),
                // 7 and the big id were trained; 99 is new to the servers, which create its row on the pull below
                "ids", Tensor.ofLongs(new long[]{7, 123_456_789_012L, 99, 7}, 4, 1));
        float[][] predictions = new float[1][];
        String[] logit = new String[1];
        serveAndRun(null, (worker, exe, scope, net) -> {
            for (int step = 0; step < 2; step++) {
                exe.run(net.main(), scope, net.feed(), List.of());
            }
            worker.saveInferenceModel(model, net.test(), List.of("x", "ids"), List.of(net.logit().name()), scope);
            logit[0] = net.logit().name();
            Program pulling = worker.testProgram(net.test());
            predictions[0] = exe.run(pulling, scope, batch, List.of(net.logit().name())).get(net.logit().name()).toFloatArray();
            return 0;
        });
        assertFalse(Files.exists(model.resolve(".tables")), "the servers' staged tables are removed");
        InferenceModel loaded = Fleet.loadInferenceModel(model);
        List<String> ops = loaded.program().globalBlock().ops().stream().map(Op::type).toList();
        assertTrue(ops.contains("lookup_sparse_table") && !ops.contains("pull_sparse") && !ops.contains("pull_dense"), ops.toString());
        assertEquals(2, loaded.scope().get("embedding_0.w_0@ids").numel(), "the rows the servers held");
        try (Executor exe = new Executor()) { // one process, no servers
            float[] served = loaded.run(exe, batch).get(logit[0]).toFloatArray();
            assertArrayEquals(predictions[0], served, "the saved model's predictions against the servers'");
        }
    }

    private interface WorkerSteps {
        float run(Fleet worker, Executor exe, Scope scope, SparseNet net);
    }

    /** One server (from {@code checkpoint} when not null) and one worker over grpc; returns what {@code steps} returns. */
    private static float serveAndRun(Path checkpoint, WorkerSteps steps) throws Exception {
        Serving serving = serve(new ByteArrayOutputStream(), server -> {
            server.distributedOptimizer(new Adagrad(0.3)).minimize(SparseNet.build().loss());
            server.initServer(checkpoint);
        });
        List<String> endpoints = serving.endpoints();
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream());
        Role role = Role.single().withServerEndpoints(endpoints);
        float result;
        try (Fleet worker = Fleet.init(() -> role, SYNC, QUICK, quiet, false, TOKEN)) {
            SparseNet net = SparseNet.build();
            worker.distributedOptimizer(new Adagrad(0.3)).minimize(net.loss());
            worker.initWorker();
            try (Executor exe = ExecutionSettings.executor(worker)) {
                Scope scope = new Scope();
                exe.run(net.startup(), scope);
                result = steps.run(worker, exe, scope, net);
            }
            worker.stopWorker();
        }
        serving.done().get(20, TimeUnit.SECONDS);
        return result;
    }

    /** A server serving on {@code endpoints} (one, port {@code port}); {@code done} ends when the workers stop it. */
    private record Serving(List<String> endpoints, int port, CompletableFuture<Void> done) {
    }

    /**
     * Starts one grpc server on a free port, {@code init} making its tables, and returns once it listens (its log's
     * "serves" line), so a worker started afterwards cannot take the port for a socket of its own (its store's, say)
     * in between. A port some other socket took after it was picked (FreePorts picks below the ephemeral range, so only
     * another listener could) fails the server's listen: then another port. The log is watched a line at a time.
     */
    private static Serving serve(ByteArrayOutputStream log, Consumer<Fleet> init) throws Exception {
        for (int attempt = 1; ; attempt++) {
            int port = FreePorts.one();
            List<String> endpoints = List.of("127.0.0.1:" + port);
            CompletableFuture<Void> listening = new CompletableFuture<>();
            PrintStream watched = new PrintStream(new OutputStream() {
                private final ByteArrayOutputStream line = new ByteArrayOutputStream();

                @Override
                public synchronized void write(int b) {
                    log.write(b);
                    if (b != '\n') {
                        line.write(b);
                        return;
                    }
                    if (line.toString(StandardCharsets.UTF_8).contains("fleet: server 0 serves ")) {
                        listening.complete(null);
                    }
                    line.reset();
                }
            }, true, StandardCharsets.UTF_8);
            CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
                Role role = Role.server(0, endpoints, 1, "ps-test", "test");
                try (Fleet server = Fleet.init(() -> role, SYNC, QUICK, watched, false, TOKEN)) {
                    init.accept(server);
                    server.runServer();
                }
            });
            try {
                CompletableFuture.anyOf(listening, done).get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                // the server failed before it listened: looked at below
            }
            if (listening.isDone()) {
                return new Serving(endpoints, port, done);
            }
            try {
                done.get();
                throw new IllegalStateException("the server on " + endpoints + " ended before it served");
            } catch (ExecutionException e) {
                if (attempt == 3 || !String.valueOf(e.getCause().getMessage()).contains("cannot listen")) {
                    throw e;
                }
                log.reset();
            }
        }
    }
}
