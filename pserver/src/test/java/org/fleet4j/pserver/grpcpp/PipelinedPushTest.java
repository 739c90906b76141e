package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.LongStream;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pipelined pushes (grpc++ and star_server against a server that applies pushes as they come): a push returns once
 * written, while the server has not answered it (its network threads are held busy here), and the worker still reads
 * its own writes, for ids of both of the server's network threads: a fused push is applied before the fused pull
 * behind it on the home connection, a single push before the single pull behind it on the owner's connection, and a
 * call on another connection waits for the push's answer first. A push the server refuses fails the next call, naming
 * the push. "wide" is SGD with learning rate 1 from 0: a row is minus the sum of the pushes applied before the read.
 * Each test runs with the worker's network threads (2) and without (0: the calling thread writes and reads).
 */
@ParameterizedClass(name = "worker network threads: {0}")
@ValueSource(ints = {2, 0})
class PipelinedPushTest {
    @Parameter
    int workerThreads;

    private static final int THREADS = 2;
    private static final long[] RAW = LongStream.range(0, 16).toArray();

    private final PsOptions options = Shards.options(JobToken.random());
    private final ExecutorService worker = Executors.newSingleThreadExecutor();
    private final TableShard shard = Shards.shard();
    private GrpcppServer server;
    private GrpcppConnection c;
    private MemorySegment ids;
    private MemorySegment ones;

    @BeforeEach
    void serve() {
        server = Loopback.serve(shard, options, new NetworkSettings(THREADS, false, false));
        c = (GrpcppConnection) Loopback.connect(server, options, workerThreads);
        assertEquals(THREADS, c.threads());
        ids = Shards.ids(RAW);
        assertTrue(Arrays.stream(RAW).anyMatch(id -> KeyHash.threadOf(id, THREADS) == 0)
                && Arrays.stream(RAW).anyMatch(id -> KeyHash.threadOf(id, THREADS) == 1),
                "the ids belong to both network threads");
        ones = Shards.floats(RAW.length);
        for (int i = 0; i < RAW.length; i++) {
            ones.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1f);
        }
    }

    @AfterEach
    void close() {
        worker.shutdownNow();
        c.close();
        server.close();
    }

    @Test
    void aFusedPushReturnsOnceWrittenAndTheFusedPullBehindItReadsIt() throws Exception {
        PsBatch push = new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, RAW.length, ones)));
        MemorySegment rows = Shards.floats(RAW.length);
        PsBatch pull = new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, RAW.length, rows)));
        Future<?> pulled;
        try (Hold hold = new Hold(c.home())) {
            worker.submit(() -> c.pushMany(push)).get(10, TimeUnit.SECONDS);
            assertEquals(1, c.inFlight(c.home()), "the push, unanswered while the server's home thread is busy");
            pulled = worker.submit(() -> c.pullMany(pull));
            awaitInFlight(c.home(), 2);
        }
        pulled.get(10, TimeUnit.SECONDS);
        assertArrayEquals(minus(1), rows.toArray(ValueLayout.JAVA_FLOAT), "the pull saw the push in front of it");
    }

    @Test
    void aSinglePushReturnsOnceWrittenAndTheSinglePullBehindItReadsIt() throws Exception {
        MemorySegment rows = Shards.floats(RAW.length);
        Future<?> pulled;
        try (Hold zero = new Hold(0); Hold one = new Hold(1)) {
            worker.submit(() -> c.pushSparse("wide", ids, RAW.length, ones)).get(10, TimeUnit.SECONDS);
            assertEquals(List.of(1, 1), List.of(c.inFlight(0), c.inFlight(1)),
                    "the push's part for each owner, unanswered while both threads are busy");
            pulled = worker.submit(() -> c.pullSparse("wide", ids, RAW.length, rows));
            awaitInFlight(0, 2);
            awaitInFlight(1, 2);
        }
        pulled.get(10, TimeUnit.SECONDS);
        assertArrayEquals(minus(1), rows.toArray(ValueLayout.JAVA_FLOAT), "the pull saw the push in front of it");
    }

    /** A single pull goes to the owners' connections, which nothing orders behind a fused push on the home one. */
    @Test
    void aCallOnAnotherConnectionWaitsForThePushFirst() throws Exception {
        PsBatch push = new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, RAW.length, ones)));
        MemorySegment rows = Shards.floats(RAW.length);
        Future<?> pulled;
        try (Hold hold = new Hold(c.home())) {
            worker.submit(() -> c.pushMany(push)).get(10, TimeUnit.SECONDS);
            pulled = worker.submit(() -> c.pullSparse("wide", ids, RAW.length, rows));
            // sent at once, the other thread (not held) would answer it before the push is applied
            assertThrows(TimeoutException.class, () -> pulled.get(1, TimeUnit.SECONDS),
                    "the single pull waits for the fused push's answer");
            assertEquals(0, c.inFlight(1 - c.home()), "nothing sent to the other thread yet");
        }
        pulled.get(10, TimeUnit.SECONDS);
        assertArrayEquals(minus(1), rows.toArray(ValueLayout.JAVA_FLOAT));
    }

    @Test
    void awaitPushesReturnsOnceTheServerHasAppliedThem() throws Exception {
        PsBatch push = new PsBatch(List.of(), List.of(new PsBatch.Sparse("wide", ids, RAW.length, ones)));
        Future<?> awaited;
        try (Hold hold = new Hold(c.home())) {
            for (int i = 0; i < 3; i++) {
                worker.submit(() -> c.pushMany(push)).get(10, TimeUnit.SECONDS);
            }
            awaited = worker.submit(c::awaitPushes);
            assertThrows(TimeoutException.class, () -> awaited.get(1, TimeUnit.SECONDS),
                    "awaitPushes waits for the answers");
        }
        awaited.get(10, TimeUnit.SECONDS);
        assertEquals(0, c.inFlight(c.home()));
        assertArrayEquals(minus(3), Shards.pullSparse(shard, "wide", ids, RAW.length, 1),
                "the server's own table after awaitPushes");
    }

    @Test
    void aPushTheServerRefusesFailsTheNextCallNamingThePush() {
        MemorySegment grad = Shards.floats(4);
        c.pushDense("no.such.param", 0, grad); // returns once written; the server refuses it
        MemorySegment rows = Shards.floats(RAW.length);
        PsException e = assertThrows(PsException.class, () -> c.pullSparse("wide", ids, RAW.length, rows));
        assertTrue(e.getMessage().contains("pushDense(no.such.param, block 0) (answered after it returned)")
                && e.getMessage().contains("no dense table no.such.param"), e.getMessage());
        c.pullSparse("wide", ids, RAW.length, rows);
        assertArrayEquals(minus(0), rows.toArray(ValueLayout.JAVA_FLOAT), "the connection serves on");
    }

    private static float[] minus(int pushes) {
        float[] out = new float[RAW.length];
        Arrays.fill(out, -pushes);
        return out;
    }

    private void awaitInFlight(int thread, int n) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (c.inFlight(thread) < n && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertEquals(n, c.inFlight(thread), "requests in flight on thread " + thread + "'s connection");
    }

    /** Keeps server network thread {@code thread} busy until closed. */
    private final class Hold implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);

        Hold(int thread) throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            server.networkThread(thread).execute(() -> {
                held.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(held.await(10, TimeUnit.SECONDS), "server network thread " + thread + " held");
        }

        @Override
        public void close() {
            release.countDown();
        }
    }

    @Test
    void aSyncModeServerIsNotPipelined() {
        TableShard syncShard = Shards.shard();
        syncShard.aggregateSteps(2);
        try (GrpcppServer sync = Loopback.serve(syncShard, options, new NetworkSettings(1, false, false));
             PsConnection s = Loopback.connect(sync, options)) {
            assertFalse(((GrpcppConnection) s).pipelines(), "a sync-mode server's pushes are awaited");
        }
    }
}
