package org.fleet4j.bench.pserver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpcpp.EndpointMap;
import org.fleet4j.pserver.grpcpp.GrpcppTransport;
import org.fleet4j.pserver.grpcpp.NetworkSettings;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * Pull and push throughput of the parameter-server transports side by side, until ps_perf covers them: one server
 * (a 1M-id sparse table of dimension 16, Adagrad) and W workers in this JVM on loopback, each step a batch of 4,096
 * Zipf(1.1) ids over 1M, deduplicated, pulled and then pushed (a gradient per unique id). The protocols run in
 * interleaved rounds on the same precomputed batches; each round prints unique keys/s (pulled and pushed), MB/s of
 * payload and the p50/p99 step time of a worker.
 *
 * <pre>java -cp 'build/bench/*' org.fleet4j.bench.pserver.TransportThroughputBench [workers] [steps] [rounds]</pre>
 * The grpc++ server's data port is a free port, found through an endpoint map made here; its network threads follow
 * NETWORK_PS_CORE_NUMBER / PS_ENABLE_POLLING / PS_DISABLE_PIN_CORES (default min(8, W)) and the workers' theirs.
 */
public final class TransportThroughputBench {
    private static final int IDS = 1_000_000;
    private static final int DIM = 16;
    private static final int BATCH = 4096;

    private TransportThroughputBench() {
    }

    public static void main(String[] args) throws Exception {
        int workers = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        List<String> protocols = args.length > 3 ? List.of(args[3].split(",")) : List.of("grpc", "grpc++");
        long[][][] batches = new long[workers][steps][];
        double[] cdf = zipfCdf(IDS, 1.1);
        for (int w = 0; w < workers; w++) {
            Random r = new Random(100 + w);
            for (int s = 0; s < steps; s++) {
                batches[w][s] = uniqueZipf(r, cdf);
            }
        }
        double uniquePerStep = Arrays.stream(batches).flatMap(Arrays::stream).mapToInt(b -> b.length).average()
                .orElse(0);
        System.out.printf("%d worker(s) x 1 server, %d steps of %d Zipf(1.1) ids over %,d (%.0f unique on average),"
                + " dimension %d, %d cores%n", workers, steps, BATCH, IDS, uniquePerStep, DIM,
                Runtime.getRuntime().availableProcessors());
        for (int round = 0; round <= rounds; round++) {
            for (String protocol : protocols) {
                Result r = run(protocol, workers, batches);
                if (round > 0) {
                    System.out.printf("round %d %-7s %,12.0f keys/s %8.1f MB/s  p50 %6.2f ms  p99 %6.2f ms%n", round,
                            protocol, r.keysPerSec, r.mbPerSec, r.p50, r.p99);
                }
            }
        }
    }

    private record Result(double keysPerSec, double mbPerSec, double p50, double p99) {
    }

    private static Result run(String protocol, int workers, long[][][] batches) throws Exception {
        TableShard shard = new TableShard(0, 1, List.of(), List.of(new SparseTableConfig("emb", DIM,
                new ServerOptimizer.Adagrad(0.05f, 1e-6f), RowInitializer.uniform(-0.01f, 0.01f, 1))));
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(60), JobToken.random());
        boolean grpcpp = protocol.equals(GrpcppTransport.PROTOCOL);
        NetworkSettings serverSide = NetworkSettings.fromEnvironment(System.getenv(), NetworkSettings.Side.SERVER,
                workers);
        PsTransport transport = grpcpp ? new GrpcppTransport(EndpointMap.empty(), serverSide, null)
                : PsTransport.forProtocol(protocol);
        try (PsServer server = transport.serve(shard, options)) {
            PsTransport client = grpcpp ? new GrpcppTransport(EndpointMap.parse(List.of(server.endpoint() + "="
                    + GrpcppTransport.dataEndpointOf(server)), "bench"), null, NetworkSettings.fromEnvironment(
                    System.getenv(), NetworkSettings.Side.WORKER, serverSide.threads())) : transport;
            ExecutorService pool = Executors.newFixedThreadPool(workers);
            List<Future<long[]>> futures = new ArrayList<>();
            CyclicBarrier connected = new CyclicBarrier(workers);
            for (int w = 0; w < workers; w++) {
                long[][] mine = batches[w];
                futures.add(pool.submit((Callable<long[]>) () -> worker(client, server.endpoint(), options, mine,
                        connected)));
            }
            List<Long> stepNanos = new ArrayList<>();
            long keys = 0;
            long start = Long.MAX_VALUE;
            long end = 0;
            for (Future<long[]> f : futures) {
                long[] times = f.get();
                start = Math.min(start, times[times.length - 2]);
                end = Math.max(end, times[times.length - 1]);
                for (int i = 0; i < times.length - 2; i++) {
                    stepNanos.add(times[i]);
                }
            }
            double seconds = (end - start) / 1e9;
            pool.shutdown();
            for (long[][] b : batches) {
                for (long[] step : b) {
                    keys += 2L * step.length;
                }
            }
            stepNanos.sort(null);
            double mb = keys * (Long.BYTES + (double) DIM * Float.BYTES) / 1e6;
            return new Result(keys / seconds, mb / seconds, stepNanos.get(stepNanos.size() / 2) / 1e6,
                    stepNanos.get((int) (stepNanos.size() * 0.99)) / 1e6);
        }
    }

    /**
     * One worker's steps once every worker is connected: pull the unique ids' rows, push a gradient for each; the
     * time of every step, then when the steps began and ended.
     */
    private static long[] worker(PsTransport transport, String endpoint, PsOptions options, long[][] steps,
                                 CyclicBarrier connected) throws Exception {
        long[] times = new long[steps.length + 2];
        try (PsConnection c = transport.connect(endpoint, options); Arena arena = Arena.ofConfined()) {
            MemorySegment ids = arena.allocate((long) BATCH * Long.BYTES, 64);
            MemorySegment rows = arena.allocate((long) BATCH * DIM * Float.BYTES, 64);
            MemorySegment grads = arena.allocate((long) BATCH * DIM * Float.BYTES, 64);
            for (long i = 0; i < (long) BATCH * DIM; i++) {
                grads.setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 13) * 0.001f);
            }
            connected.await();
            times[steps.length] = System.nanoTime();
            for (int s = 0; s < steps.length; s++) {
                long[] batch = steps[s];
                MemorySegment.copy(batch, 0, ids, ValueLayout.JAVA_LONG, 0, batch.length);
                long t0 = System.nanoTime();
                c.pullSparse("emb", ids, batch.length, rows);
                c.pushSparse("emb", ids, batch.length, grads);
                times[s] = System.nanoTime() - t0;
            }
            times[steps.length + 1] = System.nanoTime();
        }
        return times;
    }

    private static double[] zipfCdf(int n, double s) {
        double[] cdf = new double[n];
        double sum = 0;
        for (int k = 1; k <= n; k++) {
            sum += 1 / Math.pow(k, s);
            cdf[k - 1] = sum;
        }
        for (int k = 0; k < n; k++) {
            cdf[k] /= sum;
        }
        return cdf;
    }

    /** A batch of Zipf ids, deduplicated in first-seen order, as a worker sends them. */
    private static long[] uniqueZipf(Random r, double[] cdf) {
        Set<Long> unique = new LinkedHashSet<>();
        for (int i = 0; i < BATCH; i++) {
            int rank = Arrays.binarySearch(cdf, r.nextDouble());
            unique.add((long) (rank < 0 ? -rank - 1 : rank) * 0x9E3779B97F4A7C15L);
        }
        return unique.stream().mapToLong(Long::longValue).toArray();
    }
}
