package org.fleet4j.pserver.grpc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsTransport;

/** The tables the grpc tests serve, their options on loopback, and off-heap buffers as a worker hands them over. */
public final class Shards {
    public static final int DIM = 16;
    public static final PsTransport GRPC = PsTransport.forProtocol("grpc");

    private Shards() {
    }

    /** Server 0 of 1: a dense weight (Adagrad) and bias (SGD), a sparse embedding (Adagrad) and a 1-wide one (SGD). */
    public static TableShard shard() {
        return new TableShard(0, 1,
                List.of(new DenseTableConfig("fc.w", new long[]{64, DIM}, new ServerOptimizer.Adagrad(0.1f, 1e-6f),
                                RowInitializer.uniform(-1f, 1f, 3)),
                        new DenseTableConfig("fc.b", new long[]{DIM}, new ServerOptimizer.Sgd(0.5f),
                                RowInitializer.constant(0.25f))),
                List.of(new SparseTableConfig("emb", DIM, new ServerOptimizer.Adagrad(0.05f, 1e-6f),
                                RowInitializer.uniform(-0.1f, 0.1f, 7)),
                        new SparseTableConfig("wide", 1, new ServerOptimizer.Sgd(1f), RowInitializer.constant(0f))));
    }

    public static PsOptions options(JobToken token) {
        return new PsOptions("127.0.0.1:0", Duration.ofSeconds(10), token);
    }

    public static MemorySegment ids(long... ids) {
        MemorySegment s = Arena.ofAuto().allocate((long) ids.length * Long.BYTES, 64);
        MemorySegment.copy(ids, 0, s, ValueLayout.JAVA_LONG, 0, ids.length);
        return s;
    }

    public static MemorySegment floats(long n) {
        return Arena.ofAuto().allocate(n * Float.BYTES, 64);
    }

    /** {@code n} floats drawn from {@code random} in [-1, 1). */
    public static MemorySegment randomFloats(Random random, long n) {
        MemorySegment s = floats(n);
        for (long i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, random.nextFloat() * 2 - 1);
        }
        return s;
    }

    /** Rows pulled from a table shard or a connection into fresh off-heap buffers, as arrays. */
    public static float[] pullSparse(TableShard shard, String table, MemorySegment ids, int n, int dim) {
        MemorySegment out = floats((long) n * dim);
        shard.pullSparse(table, ids, n, out);
        return out.toArray(ValueLayout.JAVA_FLOAT);
    }

    public static float[] pullSparse(PsConnection c, String table, MemorySegment ids, int n, int dim) {
        MemorySegment out = floats((long) n * dim);
        c.pullSparse(table, ids, n, out);
        return out.toArray(ValueLayout.JAVA_FLOAT);
    }

    public static float[] pullDense(TableShard shard, String param, long numel) {
        MemorySegment out = floats(numel);
        shard.pullDense(param, 0, out);
        return out.toArray(ValueLayout.JAVA_FLOAT);
    }

    public static float[] pullDense(PsConnection c, String param, long numel) {
        MemorySegment out = floats(numel);
        c.pullDense(param, 0, out);
        return out.toArray(ValueLayout.JAVA_FLOAT);
    }
}
