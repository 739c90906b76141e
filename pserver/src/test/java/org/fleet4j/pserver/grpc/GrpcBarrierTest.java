package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.junit.jupiter.api.Test;

class GrpcBarrierTest {
    private static final int WORKERS = 3;

    @Test
    void threeWorkersAreReleasedTogetherRoundAfterRoundAndAMissingOneIsNamed() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        List<PsConnection> workers = new ArrayList<>();
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options)) {
            for (int w = 0; w < WORKERS; w++) {
                workers.add(Shards.GRPC.connect(server.endpoint(), options));
            }
            for (int round = 0; round < 3; round++) {
                List<Future<?>> arrivals = new ArrayList<>();
                for (int w = 0; w < WORKERS; w++) {
                    int me = w;
                    arrivals.add(pool.submit(() -> workers.get(me).barrier("step", me, WORKERS, Duration.ofSeconds(30))));
                }
                for (Future<?> f : arrivals) {
                    f.get(60, TimeUnit.SECONDS);
                }
            }
            List<Future<?>> twoOfThree = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int me = w;
                // long enough that both arrive before it runs out on a loaded machine (300 ms did not always do)
                twoOfThree.add(pool.submit(() -> workers.get(me).barrier("step", me, WORKERS, Duration.ofMillis(2000))));
            }
            for (int w = 0; w < 2; w++) {
                Future<?> f = twoOfThree.get(w);
                PsException e = (PsException) assertThrows(Exception.class, () -> f.get(60, TimeUnit.SECONDS)).getCause();
                String m = e.getMessage();
                assertTrue(m.startsWith("barrier(step, worker " + w + " of 3) on parameter server " + server.endpoint()
                        + " failed: barrier 'step' (generation 3, 3 workers) on parameter server " + server.endpoint()
                        + ": worker [2] did not arrive within 2000 ms (arrived: [0, 1])"), m);
            }
        } finally {
            workers.forEach(PsConnection::close);
            pool.shutdownNow();
        }
    }

    @Test
    void workersThatDisagreeOnTheCountAreToldBoth() {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try (Barriers barriers = new Barriers(() -> "here:1", timer)) {
            CompletableFuture<String> first = new CompletableFuture<>();
            CompletableFuture<String> wrong = new CompletableFuture<>();
            CompletableFuture<String> second = new CompletableFuture<>();
            barriers.arrive("init", 0, 2, Duration.ofSeconds(30), first::complete);
            barriers.arrive("init", 1, 3, Duration.ofSeconds(30), wrong::complete);
            assertEquals("barrier 'init' (generation 0, 2 workers): worker 1 expects 3 workers, the workers [0] already"
                    + " waiting expect 2", wrong.join());
            barriers.arrive("init", 1, 2, Duration.ofSeconds(30), second::complete);
            assertEquals(null, first.join(), "released");
            assertEquals(null, second.join(), "released");
        } finally {
            timer.shutdownNow();
        }
    }

    @Test
    void aWorkerOutsideTheCountIsRefusedOverTheWire() {
        PsOptions options = Shards.options(JobToken.random());
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            PsException e = assertThrows(PsException.class, () -> c.barrier("other", 4, 3, Duration.ofSeconds(1)));
            assertEquals("barrier(other, worker 4 of 3) on parameter server " + server.endpoint() + " failed: barrier"
                    + " 'other': worker 4 is not one of 3 workers [0, 3)", e.getMessage());
            c.barrier("alone", 0, 1, Duration.ofSeconds(30));
        }
    }

    @Test
    void aWorkerWhoseCallEndedIsNotCounted() {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try (Barriers barriers = new Barriers(() -> "here:1", timer)) {
            List<String> outcomes = new ArrayList<>();
            Runnable leave = barriers.arrive("b", 0, 3, Duration.ofSeconds(30), why -> outcomes.add("0: " + why));
            leave.run();
            CompletableFuture<String> one = new CompletableFuture<>();
            CompletableFuture<String> two = new CompletableFuture<>();
            barriers.arrive("b", 1, 3, Duration.ofMillis(200), one::complete);
            barriers.arrive("b", 2, 3, Duration.ofSeconds(30), two::complete);
            String expected = "barrier 'b' (generation 0, 3 workers) on parameter server here:1: worker [0] did not arrive"
                    + " within 200 ms (arrived: [1, 2])";
            assertEquals(expected, one.join());
            assertEquals(expected, two.join());
            assertEquals(List.of(), outcomes, "the worker that left hears nothing more");
        } finally {
            timer.shutdownNow();
        }
    }
}
