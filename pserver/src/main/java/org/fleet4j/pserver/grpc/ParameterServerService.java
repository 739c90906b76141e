package org.fleet4j.pserver.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.pserver.grpc.proto.BarrierRequest;
import org.fleet4j.pserver.grpc.proto.DenseBlock;
import org.fleet4j.pserver.grpc.proto.Done;
import org.fleet4j.pserver.grpc.proto.Floats;
import org.fleet4j.pserver.grpc.proto.HelloReply;
import org.fleet4j.pserver.grpc.proto.HelloRequest;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;
import org.fleet4j.pserver.grpc.proto.PathRequest;
import org.fleet4j.pserver.grpc.proto.PullDenseRequest;
import org.fleet4j.pserver.grpc.proto.PullSparseRequest;
import org.fleet4j.pserver.grpc.proto.PushDenseRequest;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.grpc.proto.StatsReply;
import org.fleet4j.pserver.grpc.proto.StatsRequest;
import org.fleet4j.pserver.grpc.proto.StopRequest;
import org.fleet4j.pserver.grpc.proto.TableStats;
import org.fleet4j.pserver.table.TableException;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.Sessions;

/**
 * The grpc protocol's calls, answered from a {@link TableShard}. A request the tables cannot serve (a table, block or
 * size they do not have) is answered with INVALID_ARGUMENT and the tables' own message; a checkpoint that cannot be
 * written or read with FAILED_PRECONDITION; anything else with INTERNAL, logged here with its stack trace.
 */
final class ParameterServerService extends ParameterServerGrpc.ParameterServerImplBase {
    private static final System.Logger LOG = System.getLogger(ParameterServerService.class.getName());
    private static final Done DONE = Done.getDefaultInstance();

    private final String protocol;
    private final TableShard shard;
    private final Sessions sessions;
    private final Barriers barriers;
    private final Supplier<String> endpoint;
    private final Runnable onStop;
    /** Calls under way per table, for stats; a name the shard does not have is not counted. */
    private final Map<String, AtomicInteger> underWay = new LinkedHashMap<>();

    /**
     * {@code protocol}: the name Hello answers with (grpc, or grpc++ whose control calls these are). {@code sessions}
     * null: the server checks no job token. {@code onStop} runs once a worker's stop is answered.
     */
    ParameterServerService(String protocol, TableShard shard, Sessions sessions, Barriers barriers, Supplier<String> endpoint,
                           Runnable onStop) {
        this.protocol = protocol;
        this.shard = shard;
        this.sessions = sessions;
        this.barriers = barriers;
        this.endpoint = endpoint;
        this.onStop = onStop;
        shard.stats().forEach(t -> underWay.put(t.table(), new AtomicInteger()));
    }

    @Override
    public void hello(HelloRequest request, StreamObserver<HelloReply> reply) {
        HelloReply.Builder hello = HelloReply.newBuilder().setProtocol(protocol).setServer(endpoint.get())
                .setShard(shard.server()).setShards(shard.servers());
        shard.sparseConfigs().forEach(c -> hello.putSparseDims(c.name(), c.dim()));
        shard.denseBlocks().forEach(b -> hello.addDenseBlocks(DenseBlock.newBuilder().setParam(b.spec().param())
                .setBlock(b.spec().block()).setNumel(b.spec().numel())));
        if (sessions != null) {
            byte[] session = sessions.open();
            hello.setSession(ByteString.copyFrom(session))
                    .setServerProof(ByteString.copyFrom(sessions.serverProof(request.getClientNonce().toByteArray(), session)));
        }
        answer(reply, () -> hello.build());
    }

    @Override
    public void pullDense(PullDenseRequest request, StreamObserver<Floats> reply) {
        answer(request.getParam(), reply, () -> {
            long numel = shard.denseBlock(request.getParam(), request.getBlock()).spec().numel();
            byte[] out = new byte[Math.toIntExact(numel * Float.BYTES)];
            shard.pullDense(request.getParam(), request.getBlock(), MemorySegment.ofArray(out));
            return Floats.newBuilder().setValues(UnsafeByteOperations.unsafeWrap(out)).build();
        });
    }

    @Override
    public void pushDense(PushDenseRequest request, StreamObserver<Done> reply) {
        answer(request.getParam(), reply, () -> {
            long numel = shard.denseBlock(request.getParam(), request.getBlock()).spec().numel();
            requireBytes(request.getGrad(), numel * Float.BYTES, "dense " + request.getParam() + " block "
                    + request.getBlock() + ": the gradient", numel + " floats");
            shard.pushDense(request.getParam(), request.getBlock(), Wire.view(request.getGrad()));
            return DONE;
        });
    }

    @Override
    public void pullSparse(PullSparseRequest request, StreamObserver<Floats> reply) {
        answer(request.getTable(), reply, () -> {
            int dim = shard.sparseTable(request.getTable()).config().dim();
            int n = ids(request.getTable(), request.getIds());
            byte[] out = new byte[Math.toIntExact((long) n * dim * Float.BYTES)];
            shard.pullSparse(request.getTable(), Wire.view(request.getIds()), n, MemorySegment.ofArray(out));
            return Floats.newBuilder().setValues(UnsafeByteOperations.unsafeWrap(out)).build();
        });
    }

    @Override
    public void pushSparse(PushSparseRequest request, StreamObserver<Done> reply) {
        answer(request.getTable(), reply, () -> {
            int dim = shard.sparseTable(request.getTable()).config().dim();
            int n = ids(request.getTable(), request.getIds());
            requireBytes(request.getGrads(), (long) n * dim * Float.BYTES, "sparse table " + request.getTable()
                    + ": the gradients", n + " ids x dimension " + dim + " floats");
            shard.pushSparse(request.getTable(), Wire.view(request.getIds()), n, Wire.view(request.getGrads()));
            return DONE;
        });
    }

    @Override
    public void barrier(BarrierRequest request, StreamObserver<Done> reply) {
        ServerCallStreamObserver<Done> call = (ServerCallStreamObserver<Done>) reply;
        Runnable leave = barriers.arrive(request.getName(), request.getWorker(), request.getWorkers(),
                Duration.ofMillis(request.getTimeoutMs()), why -> {
                    if (why == null) {
                        reply.onNext(DONE);
                        reply.onCompleted();
                    } else if (!call.isCancelled()) {
                        reply.onError(Status.ABORTED.withDescription(why).asRuntimeException());
                    }
                });
        call.setOnCancelHandler(leave);
    }

    @Override
    public void save(PathRequest request, StreamObserver<Done> reply) {
        answer(reply, () -> {
            shard.save(dir(request));
            return DONE;
        });
    }

    @Override
    public void load(PathRequest request, StreamObserver<Done> reply) {
        answer(reply, () -> {
            shard.load(dir(request));
            return DONE;
        });
    }

    @Override
    public void stats(StatsRequest request, StreamObserver<StatsReply> reply) {
        answer(reply, () -> {
            StatsReply.Builder stats = StatsReply.newBuilder();
            for (org.fleet4j.pserver.table.TableStats t : shard.stats()) {
                stats.addTables(TableStats.newBuilder().setTable(t.table()).setKind(t.kind()).setKeys(t.keys())
                        .setBytes(t.bytes()).setQueueDepth(underWay.get(t.table()).get()));
            }
            return stats.build();
        });
    }

    @Override
    public void stop(StopRequest request, StreamObserver<Done> reply) {
        reply.onNext(DONE);
        reply.onCompleted();
        onStop.run();
    }

    private <T> void answer(StreamObserver<T> reply, Supplier<T> work) {
        answer(null, reply, work);
    }

    /** Answers with {@code work}'s result or its failure; a call for {@code table} counts as under way until then. */
    private <T> void answer(String table, StreamObserver<T> reply, Supplier<T> work) {
        AtomicInteger counter = table == null ? null : underWay.get(table);
        if (counter == null) {
            answerNow(reply, work);
            return;
        }
        counter.incrementAndGet();
        try {
            answerNow(reply, work);
        } finally {
            counter.decrementAndGet();
        }
    }

    private <T> void answerNow(StreamObserver<T> reply, Supplier<T> work) {
        T answer;
        try {
            answer = work.get();
        } catch (TableException | IllegalArgumentException e) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (CheckpointException e) {
            reply.onError(Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "parameter server " + endpoint.get() + ": a call failed", e);
            reply.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return;
        }
        reply.onNext(answer);
        reply.onCompleted();
    }

    private static int ids(String table, ByteString ids) {
        if (ids.size() % Long.BYTES != 0) {
            throw new IllegalArgumentException("sparse table " + table + ": the ids hold " + ids.size()
                    + " bytes, not a whole number of int64");
        }
        return ids.size() / Long.BYTES;
    }

    private static void requireBytes(ByteString bytes, long expected, String what, String shape) {
        if (bytes.size() != expected) {
            throw new IllegalArgumentException(what + " came as " + bytes.size() + " bytes, expected " + expected
                    + " (" + shape + ")");
        }
    }

    private static Path dir(PathRequest request) {
        if (request.getDir().isEmpty()) {
            throw new IllegalArgumentException("no checkpoint directory given");
        }
        return Path.of(request.getDir());
    }
}
