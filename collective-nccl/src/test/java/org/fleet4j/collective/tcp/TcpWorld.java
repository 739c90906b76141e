package org.fleet4j.collective.tcp;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Store;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.group.GroupContext;

/**
 * One tcp group per rank of one job, as threads of this JVM over a real store and real loopback sockets, built
 * straight from {@link GroupContext}s so that each rank may have its own options.
 */
final class TcpWorld implements AutoCloseable {
    private static final Duration SETUP = Duration.ofSeconds(60);
    private static final JobToken TOKEN = JobToken.random();
    final List<Store> stores = new ArrayList<>();
    final List<GroupContext> contexts = new ArrayList<>();
    final List<TcpProcessGroup> groups = new ArrayList<>();
    private final ExecutorService pool;

    interface Body {
        void run(int rank, TcpProcessGroup g) throws Exception;
    }

    /** Every rank with a 30 s group timeout and chunks of {@code chunkBytes}. */
    TcpWorld(int n, int chunkBytes) throws Exception {
        this(n, r -> GroupOptions.defaults().withTimeout(Duration.ofSeconds(30)).withTcpChunkBytes(chunkBytes));
    }

    /** Opens the ranks' groups concurrently (each constructor waits for its peers to connect). */
    TcpWorld(int n, IntFunction<GroupOptions> optionsOf) throws Exception {
        String job = "tcp-world-" + System.nanoTime();
        TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), job, TOKEN, SETUP);
        stores.add(host);
        for (int r = 1; r < n; r++) {
            stores.add(TcpStore.connect("127.0.0.1", host.hostedPort(), job, TOKEN, SETUP));
        }
        int[] global = new int[n];
        String[] hosts = new String[n];
        for (int r = 0; r < n; r++) {
            global[r] = r;
            hosts[r] = "host-" + r;
        }
        for (int r = 0; r < n; r++) {
            GroupOptions options = optionsOf.apply(r).withBackend(Backend.TCP);
            contexts.add(new GroupContext(job, "default", r, global, hosts, stores.get(r), TOKEN, "127.0.0.1", options));
        }
        pool = Executors.newFixedThreadPool(n);
        List<Future<TcpProcessGroup>> opening = new ArrayList<>();
        for (GroupContext ctx : contexts) {
            opening.add(pool.submit(() -> new TcpProcessGroup(ctx)));
        }
        try {
            for (Future<TcpProcessGroup> f : opening) {
                groups.add(f.get(SETUP.toSeconds(), TimeUnit.SECONDS));
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** Runs {@code body} on every rank at once, rethrowing the first failure. */
    void run(Body body) throws Exception {
        for (Throwable t : failures(body)) {
            if (t instanceof Exception e) {
                throw e;
            }
            if (t instanceof Error e) {
                throw e;
            }
        }
    }

    /** Runs {@code body} on every rank at once; each rank's failure, or null where it succeeded. */
    List<Throwable> failures(Body body) throws Exception {
        List<Future<?>> running = new ArrayList<>();
        for (int r = 0; r < groups.size(); r++) {
            int rank = r;
            running.add(pool.submit(() -> {
                body.run(rank, groups.get(rank));
                return null;
            }));
        }
        List<Throwable> out = new ArrayList<>();
        for (Future<?> f : running) {
            try {
                f.get(120, TimeUnit.SECONDS);
                out.add(null);
            } catch (ExecutionException e) {
                out.add(e.getCause());
            }
        }
        return out;
    }

    @Override
    public void close() {
        groups.forEach(TcpProcessGroup::close);
        stores.forEach(Store::close);
        pool.shutdownNow();
    }
}
