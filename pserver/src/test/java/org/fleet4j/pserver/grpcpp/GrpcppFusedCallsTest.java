package org.fleet4j.pserver.grpcpp;

import static org.fleet4j.pserver.grpc.Shards.pullDense;
import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.junit.jupiter.api.Test;

/**
 * grpc++'s pullMany and pushMany: a step's calls to one server are one frame (while the worker's home network thread
 * is held busy, the whole batch is one request in flight, on that thread's connection, though its entries belong to
 * both threads), counted once by the server's Stats, and they do what the single calls do, bit for bit. One call after
 * another, as PsConnection's default does, or a request per owner, has several requests and fails here.
 */
class GrpcppFusedCallsTest {
    private static final int DIM = Shards.DIM;
    private static final int THREADS = 2;

    @Test
    void aBatchIsInFlightAtOnceAndEqualsTheSingleCalls() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        TableShard direct = Shards.shard();
        long[] raw = LongStream.range(0, 400).toArray();
        long numel = direct.denseBlock("fc.w", 0).spec().numel();
        Random random = new Random(17);
        MemorySegment denseGrad = Shards.randomFloats(random, numel);
        MemorySegment ids = Shards.ids(raw);
        MemorySegment embGrad = Shards.randomFloats(random, (long) raw.length * DIM);
        MemorySegment wideGrad = Shards.randomFloats(random, raw.length);
        PsBatch push = new PsBatch(List.of(new PsBatch.Dense("fc.w", 0, denseGrad)),
                List.of(new PsBatch.Sparse("emb", ids, raw.length, embGrad),
                        new PsBatch.Sparse("wide", ids, raw.length, wideGrad)));
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try (GrpcppServer server = Loopback.serve(shard, options, new NetworkSettings(THREADS, false, false));
             PsConnection c = Loopback.connect(server, options)) {
            GrpcppConnection connection = (GrpcppConnection) c;
            int home = connection.home();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            server.networkThread(home).execute(() -> {
                held.countDown();
                awaitQuietly(release);
            });
            held.await(10, TimeUnit.SECONDS);
            Future<?> pushed;
            try {
                pushed = worker.submit(() -> c.pushMany(push));
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (connection.inFlight(home) < 1 && System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                assertEquals(1, connection.inFlight(home), "the batch in flight while the server's home thread "
                        + home + " is busy");
                assertEquals(0, connection.inFlight(1 - home), "requests on the other thread's connection");
            } finally {
                release.countDown();
            }
            pushed.get(30, TimeUnit.SECONDS);
            direct.pushDense("fc.w", 0, denseGrad);
            direct.pushSparse("emb", ids, raw.length, embGrad);
            direct.pushSparse("wide", ids, raw.length, wideGrad);

            MemorySegment denseOut = Shards.floats(numel);
            MemorySegment embOut = Shards.floats((long) raw.length * DIM);
            MemorySegment wideOut = Shards.floats(raw.length);
            c.pullMany(new PsBatch(List.of(new PsBatch.Dense("fc.w", 0, denseOut)),
                    List.of(new PsBatch.Sparse("emb", ids, raw.length, embOut),
                            new PsBatch.Sparse("wide", ids, raw.length, wideOut))));
            assertArrayEquals(pullDense(direct, "fc.w", numel), denseOut.toArray(ValueLayout.JAVA_FLOAT));
            assertArrayEquals(pullSparse(direct, "emb", ids, raw.length, DIM), embOut.toArray(ValueLayout.JAVA_FLOAT));
            assertArrayEquals(pullSparse(direct, "wide", ids, raw.length, 1), wideOut.toArray(ValueLayout.JAVA_FLOAT));
            assertEquals(Map.of("PullMany", 1L, "PushMany", 1L), server.dataCalls(), "the data port's calls");
        } finally {
            worker.shutdownNow();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
