package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.HotKeyPushes;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ConcurrentPushTest through the transports: several workers, each on a connection of its own, push at once to a few
 * hot keys and one dense block of one server (grpc++ through its data port's network threads, star_server and grpc
 * through their gRPC service; star_server in its own fused pushes), while another connection reads. SGD at learning
 * rate 1 with small integer gradients keeps every total exact, so a lost update shows as a wrong total and a torn
 * read as a row whose elements differ.
 */
class TransportConcurrentPushTest {
    private static final int DIM = 8;
    private static final int WORKERS = 4;
    private static final int PUSHES = 250;
    private static final long[] HOT = {0, 1, 2, 3, 1L << 33, -7};
    private static final int DENSE = 64;

    @ParameterizedTest
    @ValueSource(strings = {"grpc++", "star_server", "grpc"})
    void noUpdateIsLostOrTornWhenSeveralConnectionsPushToHotKeys(String protocol) throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = new TableShard(0, 1,
                List.of(new DenseTableConfig("bias", new long[]{DENSE}, new ServerOptimizer.Sgd(1f),
                        RowInitializer.constant(0f))),
                List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f))));
        boolean grpcpp = protocol.equals(GrpcppTransport.PROTOCOL);
        boolean fused = protocol.equals("star_server");
        PsTransport transport = PsTransport.forProtocol(protocol);
        try (PsServer server = grpcpp ? Loopback.serve(shard, options, new NetworkSettings(2, false, false))
                : transport.serve(shard, options)) {
            List<PsConnection> connections = new ArrayList<>();
            try {
                for (int w = 0; w <= WORKERS; w++) {
                    connections.add(grpcpp ? Loopback.connect((GrpcppServer) server, options)
                            : transport.connect(server.endpoint(), options));
                }
                hammer(connections, fused, shard);
            } finally {
                connections.forEach(PsConnection::close);
            }
        }
    }

    private static void hammer(List<PsConnection> connections, boolean fused, TableShard shard) throws Exception {
        long[][] expected = new long[WORKERS][HOT.length];
        AtomicLong denseExpected = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS + 1);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> work = new ArrayList<>();
        try {
            for (int w = 0; w < WORKERS; w++) {
                int me = w;
                PsConnection c = connections.get(w);
                work.add(pool.submit(() -> {
                    Random r = new Random(me);
                    MemorySegment ids = Shards.floats(HOT.length * 2L);
                    MemorySegment grads = Shards.floats((long) HOT.length * DIM);
                    MemorySegment denseGrad = Shards.floats(DENSE);
                    start.await();
                    for (int p = 0; p < PUSHES; p++) {
                        int n = HotKeyPushes.next(r, HOT, DIM, ids, grads, expected[me]);
                        int dg = 1 + r.nextInt(2);
                        for (int j = 0; j < DENSE; j++) {
                            denseGrad.setAtIndex(ValueLayout.JAVA_FLOAT, j, dg);
                        }
                        if (fused) {
                            c.pushMany(new PsBatch(List.of(new PsBatch.Dense("bias", 0, denseGrad)),
                                    List.of(new PsBatch.Sparse("emb", ids, n, grads))));
                        } else {
                            c.pushSparse("emb", ids, n, grads);
                            c.pushDense("bias", 0, denseGrad);
                        }
                        denseExpected.addAndGet(dg);
                    }
                    return null;
                }));
            }
            PsConnection readerConnection = connections.get(WORKERS);
            Future<Integer> reader = pool.submit(() -> {
                MemorySegment ids = Shards.ids(HOT);
                MemorySegment out = Shards.floats((long) HOT.length * DIM);
                MemorySegment denseOut = Shards.floats(DENSE);
                start.await();
                int reads = 0;
                do {
                    readerConnection.pullSparse("emb", ids, HOT.length, out);
                    assertUniformRows(out.toArray(ValueLayout.JAVA_FLOAT), HOT.length, DIM);
                    readerConnection.pullDense("bias", 0, denseOut);
                    assertUniformRows(denseOut.toArray(ValueLayout.JAVA_FLOAT), 1, DENSE);
                    reads++;
                } while (!work.stream().allMatch(Future::isDone));
                return reads;
            });
            start.countDown();
            for (Future<?> f : work) {
                f.get(120, TimeUnit.SECONDS);
            }
            assertTrue(reader.get(120, TimeUnit.SECONDS) > 0);
        } finally {
            pool.shutdownNow();
        }
        float[] rows = Shards.pullSparse(connections.get(WORKERS), "emb", Shards.ids(HOT), HOT.length, DIM);
        for (int k = 0; k < HOT.length; k++) {
            long total = 0;
            for (long[] perWorker : expected) {
                total += perWorker[k];
            }
            for (int j = 0; j < DIM; j++) {
                assertEquals(-total, rows[k * DIM + j], "id " + HOT[k] + " element " + j + ": every pushed gradient"
                        + " counted once");
            }
        }
        assertEquals(-denseExpected.get(), Shards.pullDense(connections.get(WORKERS), "bias", DENSE)[DENSE - 1]);
        assertEquals(-denseExpected.get(), Shards.pullDense(shard, "bias", DENSE)[0], "the table itself");
    }

    private static void assertUniformRows(float[] rows, int n, int width) {
        for (int i = 0; i < n; i++) {
            for (int j = 1; j < width; j++) {
                assertEquals(rows[i * width], rows[i * width + j], "row " + i + " read half-updated");
            }
        }
    }
}
