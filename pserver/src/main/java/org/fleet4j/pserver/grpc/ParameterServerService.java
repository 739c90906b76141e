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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
import org.fleet4j.pserver.grpc.proto.PullManyReply;
import org.fleet4j.pserver.grpc.proto.PullManyRequest;
import org.fleet4j.pserver.grpc.proto.PullSparseRequest;
import org.fleet4j.pserver.grpc.proto.PushDenseRequest;
import org.fleet4j.pserver.grpc.proto.PushManyRequest;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.grpc.proto.StatsReply;
import org.fleet4j.pserver.grpc.proto.StatsRequest;
import org.fleet4j.pserver.grpc.proto.StopRequest;
import org.fleet4j.pserver.grpc.proto.TableStats;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableException;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.Sessions;
import org.fleet4j.text.Quoted;

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
    private final CallCounts calls;
    /** The server's own data port (grpc++, star_server); null: none. */
    private final DataPort dataPort;
    private final Sessions sessions;
    private final Barriers barriers;
    private final Supplier<String> endpoint;
    private final Runnable onStop;
    /** Where save and load run: they take long, and the other calls run on the network threads. */
    private final Executor slowCalls;
    /** Calls under way per table, for stats; a name the shard does not have is not counted. */
    private final Map<String, AtomicInteger> underWay = new LinkedHashMap<>();

    /**
     * The service of {@code protocol} (grpc, or the control calls of a protocol whose pulls and pushes go to
     * {@code dataPort}; null: none). {@code sessions} null: the server checks no job token. {@code onStop} runs once a worker's stop is answered. Save and load run
     * on {@code slowCalls}; every other call is answered on the thread that delivers it.
     */
    ParameterServerService(String protocol, TableShard shard, CallCounts calls, DataPort dataPort, Sessions sessions,
                           Barriers barriers, Supplier<String> endpoint, Runnable onStop, Executor slowCalls) {
        this.protocol = protocol;
        this.shard = shard;
        this.calls = calls;
        this.dataPort = dataPort;
        this.slowCalls = slowCalls;
        this.sessions = sessions;
        this.barriers = barriers;
        this.endpoint = endpoint;
        this.onStop = onStop;
        shard.stats().forEach(t -> underWay.put(t.table(), new AtomicInteger()));
    }

    @Override
    public void hello(HelloRequest request, StreamObserver<HelloReply> reply) {
        if (!request.getProtocol().isEmpty() && !request.getProtocol().equals(protocol)) {
            reply.onError(Status.FAILED_PRECONDITION.withDescription("parameter server " + endpoint.get() + " speaks"
                    + " protocol " + Quoted.of(protocol) + ", the worker " + Quoted.of(request.getProtocol()) + "; give every process of"
                    + " the job the same strategy protocol").asRuntimeException());
            return;
        }
        HelloReply.Builder hello = HelloReply.newBuilder().setProtocol(protocol).setServer(endpoint.get())
                .setShard(shard.server()).setShards(shard.servers());
        if (dataPort != null) {
            hello.setDataEndpoint(dataPort.endpoint());
        }
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
        answer(Set.of(request.getParam()), reply, () -> pulledDense(request));
    }

    private Floats pulledDense(PullDenseRequest request) {
        long numel = shard.denseBlock(request.getParam(), request.getBlock()).spec().numel();
        byte[] out = new byte[Math.toIntExact(numel * Float.BYTES)];
        shard.pullDense(request.getParam(), request.getBlock(), MemorySegment.ofArray(out));
        return Floats.newBuilder().setValues(UnsafeByteOperations.unsafeWrap(out)).build();
    }

    @Override
    public void pushDense(PushDenseRequest request, StreamObserver<Done> reply) {
        answer(Set.of(request.getParam()), reply, () -> {
            pushedDense(request);
            return DONE;
        });
    }

    private void pushedDense(PushDenseRequest request) {
        long numel = shard.denseBlock(request.getParam(), request.getBlock()).spec().numel();
        requireBytes(request.getGrad(), numel * Float.BYTES, "dense " + request.getParam() + " block "
                + request.getBlock() + ": the gradient", numel + " floats");
        shard.pushDense(request.getParam(), request.getBlock(), Wire.gradients(request.getGrad()));
    }

    @Override
    public void pullSparse(PullSparseRequest request, StreamObserver<Floats> reply) {
        answer(Set.of(request.getTable()), reply, () -> pulledSparse(request));
    }

    private Floats pulledSparse(PullSparseRequest request) {
        int dim = shard.sparseTable(request.getTable()).config().dim();
        int n = ids(request.getTable(), request.getIds());
        byte[] out = new byte[Math.toIntExact((long) n * dim * Float.BYTES)];
        shard.pullSparse(request.getTable(), Wire.view(request.getIds()), n, MemorySegment.ofArray(out));
        return Floats.newBuilder().setValues(UnsafeByteOperations.unsafeWrap(out)).build();
    }

    @Override
    public void pushSparse(PushSparseRequest request, StreamObserver<Done> reply) {
        answer(Set.of(request.getTable()), reply, () -> {
            pushedSparse(request);
            return DONE;
        });
    }

    private void pushedSparse(PushSparseRequest request) {
        int dim = shard.sparseTable(request.getTable()).config().dim();
        int n = ids(request.getTable(), request.getIds());
        requireBytes(request.getGrads(), (long) n * dim * Float.BYTES, "sparse table " + request.getTable()
                + ": the gradients", n + " ids x dimension " + dim + " floats");
        shard.pushSparse(request.getTable(), Wire.view(request.getIds()), n, Wire.gradients(request.getGrads()));
    }

    @Override
    public void pullMany(PullManyRequest request, StreamObserver<PullManyReply> reply) {
        Set<String> tables = new LinkedHashSet<>();
        request.getDenseList().forEach(d -> tables.add(d.getParam()));
        request.getSparseList().forEach(t -> tables.add(t.getTable()));
        answer(tables, reply, () -> {
            PullManyReply.Builder out = PullManyReply.newBuilder();
            for (PullDenseRequest d : request.getDenseList()) {
                out.addDense(pulledDense(d));
            }
            for (PullSparseRequest t : request.getSparseList()) {
                out.addSparse(pulledSparse(t));
            }
            return out.build();
        });
    }

    @Override
    public void pushMany(PushManyRequest request, StreamObserver<Done> reply) {
        Set<String> tables = new LinkedHashSet<>();
        request.getDenseList().forEach(d -> tables.add(d.getParam()));
        request.getSparseList().forEach(t -> tables.add(t.getTable()));
        answer(tables, reply, () -> {
            request.getDenseList().forEach(this::pushedDense);
            request.getSparseList().forEach(this::pushedSparse);
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
        answerLater(reply, () -> {
            shard.save(dir(request), identity(request));
            return DONE;
        });
    }

    @Override
    public void load(PathRequest request, StreamObserver<Done> reply) {
        answerLater(reply, () -> {
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
                        .setBytes(t.bytes()).setQueueDepth(underWay.get(t.table()).get()).setPending(t.pending())
                        .setEvicted(t.evicted()).setFreedBytes(t.freedBytes()));
            }
            Map<String, Long> counted = new TreeMap<>(calls.snapshot());
            if (dataPort != null) {
                dataPort.calls().forEach((method, n) -> counted.merge(method, n, Long::sum));
            }
            return stats.putAllCalls(counted).build();
        });
    }

    @Override
    public void stop(StopRequest request, StreamObserver<Done> reply) {
        reply.onNext(DONE);
        reply.onCompleted();
        onStop.run();
    }

    private <T> void answer(StreamObserver<T> reply, Supplier<T> work) {
        answer(Set.of(), reply, work);
    }

    /** Answers on {@link #slowCalls}, or UNAVAILABLE when the server is closing and takes no more. */
    private <T> void answerLater(StreamObserver<T> reply, Supplier<T> work) {
        try {
            slowCalls.execute(() -> answer(reply, work));
        } catch (RejectedExecutionException e) {
            reply.onError(Status.UNAVAILABLE.withDescription("parameter server " + endpoint.get() + " is closing")
                    .asRuntimeException());
        }
    }

    /** Answers with {@code work}'s result or its failure; the call counts as under way for {@code tables} until then. */
    private <T> void answer(Set<String> tables, StreamObserver<T> reply, Supplier<T> work) {
        List<AtomicInteger> counters = tables.stream().map(underWay::get).filter(c -> c != null).toList();
        counters.forEach(AtomicInteger::incrementAndGet);
        try {
            answerNow(reply, work);
        } finally {
            counters.forEach(AtomicInteger::decrementAndGet);
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

    private static SaveIdentity identity(PathRequest request) {
        if (!request.hasSave() || request.getSave().getSaveId().isEmpty()) {
            throw new IllegalArgumentException("a save without a save identity; the worker is of another Fleet4J version");
        }
        var save = request.getSave();
        return new SaveIdentity(save.getJob(), save.getEpoch(), save.getStep(), save.getSaveId(), save.getIncremental());
    }

    private static Path dir(PathRequest request) {
        if (request.getDir().isEmpty()) {
            throw new IllegalArgumentException("no checkpoint directory given");
        }
        return Path.of(request.getDir());
    }
}
