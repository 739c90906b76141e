package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;

/**
 * {@code a_sync_configs.launch_barrier} as Paddle has it: true (the default) makes Fleet.initWorker wait for every
 * server, up to the job's timeout, naming the one that did not answer; false lets it return at once, and the first
 * call to a server that is not up yet retries connecting until the call's deadline.
 */
class LaunchBarrierTest {
    private static final Duration SHORT = Duration.ofSeconds(2);
    private static final Map<String, String> TOKEN = Map.of(JobToken.ENV, JobToken.random().text());
    private static final PrintStream QUIET = new PrintStream(new ByteArrayOutputStream());

    private static DistributedStrategy strategy(boolean launchBarrier) {
        return new DistributedStrategy().mode(Mode.PS).aSync(false).aSyncConfigs(c -> c.launchBarrier(launchBarrier));
    }

    @Test
    void withoutTheBarrierAWorkerStartsBeforeItsServerAndTrainsOnceItIsUp() throws Exception {
        List<String> endpoints = List.of("127.0.0.1:" + FreePorts.one());
        GroupOptions options = GroupOptions.defaults().withTimeout(Duration.ofSeconds(30));
        Role role = Role.single().withServerEndpoints(endpoints);
        try (Fleet worker = Fleet.init(() -> role, strategy(false), options, QUIET, false, TOKEN)) {
            PsTestNet net = PsTestNet.build();
            worker.distributedOptimizer(new SGD(0.5)).minimize(net.loss());
            // no server listens yet: with the barrier this would wait for it and fail after 30 s
            worker.initWorker();
            CompletableFuture<Void> serving = serve(endpoints, options, false);
            float[] losses = net.firstAndThirdLoss(worker);
            float first = losses[0];
            float last = losses[1];
            // each step lowers the loss by PsTestNet.LOSS_DROP_PER_STEP
            assertEquals(first - 2 * PsTestNet.LOSS_DROP_PER_STEP, last, 1e-4, "two updates applied on the server that came up late");
            worker.stopWorker();
            serving.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void withoutTheBarrierTheFirstCallToAServerThatNeverComesFailsAtItsDeadlineNamingIt() throws Exception {
        String endpoint = "127.0.0.1:" + FreePorts.one();
        Role role = Role.single().withServerEndpoints(List.of(endpoint));
        try (Fleet worker = Fleet.init(() -> role, strategy(false), GroupOptions.defaults().withTimeout(SHORT), QUIET,
                false, TOKEN)) {
            PsTestNet net = PsTestNet.build();
            worker.distributedOptimizer(new SGD(0.5)).minimize(net.loss());
            worker.initWorker();
            try (Executor exe = ExecutionSettings.executor(worker)) {
                Scope scope = new Scope();
                exe.run(net.startup(), scope);
                Map<String, Tensor> feed = Map.of(net.x().name(), Tensor.of(new float[]{1, 2, 3, 4}, 2, 2));
                long start = System.nanoTime();
                RuntimeException e = assertThrows(RuntimeException.class, () -> exe.run(net.main(), scope, feed, List.of()));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms >= SHORT.toMillis() - 100 && ms < SHORT.toMillis() + 5_000,
                        "the first call retried connecting for " + ms + " ms, not about its deadline of " + SHORT);
                assertTrue(messages(e).contains("connect on parameter server " + endpoint + ": no answer within "
                        + SHORT.toMillis() + " ms"), messages(e));
            }
        }
    }

    @Test
    void withTheBarrierInitWorkerWaitsAtMostTheTimeoutAndNamesTheServerThatDidNotAnswer() throws Exception {
        String endpoint = "127.0.0.1:" + FreePorts.one();
        Role role = Role.single().withServerEndpoints(List.of(endpoint));
        try (Fleet worker = Fleet.init(() -> role, strategy(true), GroupOptions.defaults().withTimeout(SHORT), QUIET,
                false, TOKEN)) {
            worker.distributedOptimizer(new SGD(0.5)).minimize(PsTestNet.build().loss());
            long start = System.nanoTime();
            RuntimeException e = assertThrows(RuntimeException.class, worker::initWorker);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= SHORT.toMillis() - 100 && ms < SHORT.toMillis() + 5_000,
                    "initWorker waited " + ms + " ms for its server, not about the timeout of " + SHORT);
            assertTrue(messages(e).contains("connect on parameter server " + endpoint + ": no answer within "
                    + SHORT.toMillis() + " ms"), messages(e));
        }
    }

    private static CompletableFuture<Void> serve(List<String> endpoints, GroupOptions options, boolean launchBarrier) {
        return CompletableFuture.runAsync(() -> {
            Role role = Role.server(0, endpoints, 1, "ps-test", "test");
            try (Fleet server = Fleet.init(() -> role, strategy(launchBarrier), options, QUIET, false, TOKEN)) {
                server.distributedOptimizer(new SGD(0.5)).minimize(PsTestNet.build().loss());
                server.initServer(null);
                server.runServer();
            }
        });
    }

    private static String messages(Throwable e) {
        StringBuilder s = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            s.append(t.getMessage()).append('\n');
        }
        return s.toString();
    }

}
