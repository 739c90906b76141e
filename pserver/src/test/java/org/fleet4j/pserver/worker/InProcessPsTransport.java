package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * A test-only, in-process stand-in for a wire protocol: a "connection" calls the server's {@link TableShard}
 * directly, in the caller's JVM. It lets the compile step and the worker be tested without a network; the real
 * protocol (grpc) is tested with real processes. A connection made {@link #silent} never answers, as a hung server.
 */
final class InProcessPsTransport implements PsTransport {
    private final List<TableShard> shards;

    InProcessPsTransport(List<TableShard> shards) {
        this.shards = List.copyOf(shards);
    }

    @Override
    public String protocol() {
        return "in_process_test";
    }

    @Override
    public PsServer serve(TableShard shard, PsOptions options) {
        throw new UnsupportedOperationException("the in-process stand-in has no server side; connect to a shard");
    }

    /** Endpoint "server-I" is shard I. */
    @Override
    public PsConnection connect(String endpoint, PsOptions options) {
        return new Connection(endpoint, shards.get(Integer.parseInt(endpoint.substring("server-".length()))), false);
    }

    /** A connection to shard {@code server} whose every call blocks until the thread is interrupted. */
    PsConnection silent(int server) {
        return new Connection("server-" + server, shards.get(server), true);
    }

    private record Connection(String endpoint, TableShard shard, boolean silent) implements PsConnection {
        void answer() {
            if (silent) {
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted");
                }
            }
        }

        public void pullDense(String param, int block, MemorySegment out) {
            answer();
            shard.pullDense(param, block, out);
        }

        public void pushDense(String param, int block, MemorySegment grad) {
            answer();
            shard.pushDense(param, block, grad);
        }

        public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
            answer();
            shard.pullSparse(table, ids, n, out);
        }

        public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
            answer();
            shard.pushSparse(table, ids, n, grads);
        }

        public void barrier(String name, int worker, int workers, Duration timeout) {
            throw new UnsupportedOperationException("barrier");
        }

        public void save(Path dir, SaveIdentity save) {
            shard.save(dir, save);
        }

        public void load(Path dir) {
            shard.load(dir);
        }

        public List<TableStats> stats() {
            return shard.stats();
        }

        public void stop() {
        }

        public void close() {
        }
    }
}
