package org.fleet4j.collective;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.cluster.Store;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.collective.group.ProcessGroups;

/**
 * A world of ranks as threads of this JVM, each with its own store connection and group, over real sockets and
 * real mapped files. Cheap enough to run the full correctness matrix; process-level behaviour (kill -9, launch
 * through the environment) is covered with {@link RankProcesses}.
 */
final class LocalWorld implements AutoCloseable {
    private static final Duration SETUP = Duration.ofSeconds(30);
    final TcpStore server;
    final List<Store> stores = new ArrayList<>();
    final List<ProcessGroup> groups = new ArrayList<>();
    private final ExecutorService pool;

    /** {@code nodeOf} puts each rank on a simulated node (equal node = same host key). */
    LocalWorld(int size, GroupOptions options, IntFunction<Integer> nodeOf) throws Exception {
        String job = "test-" + System.nanoTime();
        JobToken token = JobToken.random();
        server = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), job, token, SETUP);
        pool = Executors.newFixedThreadPool(size);
        stores.add(server);
        for (int r = 1; r < size; r++) {
            stores.add(TcpStore.connect("127.0.0.1", server.hostedPort(), job, token, SETUP));
        }
        List<Future<ProcessGroup>> opening = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            Role role = Role.trainer(rank, size, 0, 1, nodeOf.apply(rank), size, "127.0.0.1:" + server.hostedPort(),
                    "127.0.0.1", job, "LocalWorld");
            opening.add(pool.submit(() -> ProcessGroups.init(role, token, stores.get(rank), options, false)));
        }
        try {
            for (Future<ProcessGroup> f : opening) {
                groups.add(f.get(60, TimeUnit.SECONDS));
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    LocalWorld(int size, GroupOptions options) throws Exception {
        this(size, options, r -> 0);
    }

    ProcessGroup group(int rank) {
        return groups.get(rank);
    }

    /** Runs {@code body} for every rank at once and returns the per-rank results (rethrowing the first failure). */
    <T> List<T> run(RankBody<T> body) throws Exception {
        List<Future<T>> futures = new ArrayList<>();
        for (int r = 0; r < groups.size(); r++) {
            int rank = r;
            futures.add(pool.submit((Callable<T>) () -> body.run(rank, groups.get(rank))));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : futures) {
            out.add(f.get(120, TimeUnit.SECONDS));
        }
        return out;
    }

    /** Like {@link #run} but returns each rank's failure (or null) instead of throwing. */
    List<Throwable> failures(RankBody<?> body) throws Exception {
        List<Future<?>> futures = new ArrayList<>();
        for (int r = 0; r < groups.size(); r++) {
            int rank = r;
            futures.add(pool.submit((Callable<Object>) () -> body.run(rank, groups.get(rank))));
        }
        List<Throwable> out = new ArrayList<>();
        for (Future<?> f : futures) {
            try {
                f.get(120, TimeUnit.SECONDS);
                out.add(null);
            } catch (java.util.concurrent.ExecutionException e) {
                out.add(e.getCause());
            }
        }
        return out;
    }

    interface RankBody<T> {
        T run(int rank, ProcessGroup group) throws Exception;
    }

    @Override
    public void close() {
        for (ProcessGroup g : groups) {
            g.close();
        }
        for (Store s : stores) {
            s.close();
        }
        pool.shutdownNow();
    }
}
