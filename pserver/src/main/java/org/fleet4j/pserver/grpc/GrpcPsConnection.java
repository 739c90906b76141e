package org.fleet4j.pserver.grpc;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport.ControlConnection;
import org.fleet4j.pserver.grpc.proto.BarrierRequest;
import org.fleet4j.pserver.grpc.proto.HelloReply;
import org.fleet4j.pserver.grpc.proto.HelloRequest;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc.ParameterServerBlockingStub;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;
import org.fleet4j.pserver.grpc.proto.PathRequest;
import org.fleet4j.pserver.grpc.proto.PullDenseRequest;
import org.fleet4j.pserver.grpc.proto.PullManyReply;
import org.fleet4j.pserver.grpc.proto.PullManyRequest;
import org.fleet4j.pserver.grpc.proto.PullSparseRequest;
import org.fleet4j.pserver.grpc.proto.PushDenseRequest;
import org.fleet4j.pserver.grpc.proto.PushManyRequest;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.grpc.proto.StatsRequest;
import org.fleet4j.pserver.grpc.proto.StopRequest;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.text.Quoted;

/**
 * A worker's gRPC channel to one server. Opening it says Hello: it waits (up to the deadline) for the server to
 * listen, checks that the server speaks this protocol and holds the job token, and takes the session that every
 * later call proves the token with. Each call then has the deadline; a failure names the call and the endpoint.
 */
final class GrpcPsConnection implements PsConnection {
    private static final Duration CLOSE_PATIENCE = Duration.ofSeconds(5);

    private final NetworkThreads threads = new NetworkThreads();
    private final String protocol;
    private final String endpoint;
    private final Duration deadline;
    private final EventLoopGroup loop;
    private final ExecutorService offload;
    private final ManagedChannel channel;
    private final WireByteCounter wire = new WireByteCounter();
    private ParameterServerBlockingStub stub;
    /** What the server said it holds: sparse tables' dimensions and dense blocks' sizes, to send exact sizes. */
    private Map<String, Integer> sparseDims = Map.of();
    private Map<String, Long> denseNumel = Map.of();
    /** The server's own data port that Hello named (grpc++, star_server); empty: none. */
    private String dataEndpoint = "";

    private GrpcPsConnection(String protocol, String endpoint, PsOptions options) {
        this.protocol = protocol;
        this.endpoint = endpoint;
        this.deadline = options.deadline();
        InetSocketAddress unresolved = TcpStore.parseHostPort(endpoint, "parameter-server endpoint");
        loop = threads.eventLoops(1, "ps-grpc-client-io");
        offload = Executors.newSingleThreadExecutor(threads.named("ps-grpc-client-offload"));
        channel = NettyChannelBuilder.forAddress(new InetSocketAddress(unresolved.getHostString(), unresolved.getPort()))
                .usePlaintext()
                .channelFactory(wire.channels())
                .eventLoopGroup(loop)
                .withOption(ChannelOption.ALLOCATOR, GrpcTransport.BUFFERS)
                .directExecutor()
                .offloadExecutor(offload)
                .maxInboundMessageSize(GrpcTransport.MAX_MESSAGE_BYTES)
                .build();
        stub = ParameterServerGrpc.newBlockingStub(channel);
    }

    static GrpcPsConnection open(String protocol, String endpoint, PsOptions options) {
        GrpcPsConnection c = new GrpcPsConnection(protocol, endpoint, options);
        try {
            c.hello(options.token());
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    private void hello(JobToken token) {
        byte[] nonce = JobToken.nonce();
        HelloReply reply = call("connect", deadline,
                s -> s.withWaitForReady().hello(HelloRequest.newBuilder().setClientNonce(ByteString.copyFrom(nonce))
                        .setProtocol(protocol).build()));
        if (!protocol.equals(reply.getProtocol())) {
            throw new PsException("parameter server " + endpoint + " speaks protocol " + Quoted.of(reply.getProtocol())
                    + ", this worker " + Quoted.of(protocol) + "; give every process the same strategy protocol");
        }
        sparseDims = Map.copyOf(reply.getSparseDimsMap());
        dataEndpoint = reply.getDataEndpoint();
        denseNumel = reply.getDenseBlocksList().stream()
                .collect(Collectors.toUnmodifiableMap(b -> ControlConnection.blockKey(b.getParam(), b.getBlock()),
                        b -> b.getNumel()));
        byte[] session = reply.getSession().toByteArray();
        if (token == null) {
            if (session.length > 0) {
                throw new PsException("parameter server " + endpoint + " requires the job token and this worker has"
                        + " none; give every process of the job the same " + JobToken.ENV);
            }
            return;
        }
        if (session.length != CallProof.SESSION_BYTES) {
            throw new PsException("parameter server " + endpoint + " checks no job token but this worker holds one;"
                    + " give every process of the job the same " + JobToken.ENV);
        }
        if (!token.verifies(reply.getServerProof().toByteArray(), CallProof.SERVER, nonce, session)) {
            throw new PsException("parameter server " + endpoint + " does not hold this job's token (its proof does"
                    + " not match): it belongs to another job, or was given a different " + JobToken.ENV);
        }
        stub = stub.withInterceptors(new CallSigner(token, session));
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    /** Every call carries a gRPC deadline: the connection's, or a barrier's timeout plus it. */
    @Override
    public boolean boundsItsCalls() {
        return true;
    }

    @Override
    public void pullDense(String param, int block, MemorySegment out) {
        String what = "pullDense(" + param + ", block " + block + ")";
        ByteString values = call(what, deadline, s -> s.pullDense(
                PullDenseRequest.newBuilder().setParam(param).setBlock(block).build())).getValues();
        receive(what, values, out);
    }

    @Override
    public void pushDense(String param, int block, MemorySegment grad) {
        String what = "pushDense(" + param + ", block " + block + ")";
        Long numel = denseNumel.get(ControlConnection.blockKey(param, block));
        long bytes = numel == null ? grad.byteSize() : requireBytes(what, "gradient", grad, numel * Float.BYTES);
        call(what, deadline, s -> s.pushDense(PushDenseRequest.newBuilder()
                .setParam(param).setBlock(block).setGrad(Wire.view(grad, bytes)).build()));
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        String what = "pullSparse(" + table + ", " + n + " ids)";
        long idBytes = requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        ByteString rows = call(what, deadline, s -> s.pullSparse(PullSparseRequest.newBuilder().setTable(table)
                .setIds(Wire.view(ids, idBytes)).build())).getValues();
        if (n > 0 && rows.size() % n != 0) {
            throw new PsException(what + " on parameter server " + endpoint + ": the reply holds " + rows.size()
                    + " bytes, not " + n + " rows");
        }
        receive(what, rows, out);
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        String what = "pushSparse(" + table + ", " + n + " ids)";
        Integer dim = sparseDims.get(table);
        long bytes = dim == null ? grads.byteSize() : requireBytes(what, "gradients", grads, (long) n * dim * Float.BYTES);
        long idBytes = requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        call(what, deadline, s -> s.pushSparse(PushSparseRequest.newBuilder().setTable(table)
                .setIds(Wire.view(ids, idBytes)).setGrads(Wire.view(grads, bytes)).build()));
    }

    @Override
    public void pullMany(PsBatch batch) {
        String what = "pullMany(" + batch.dense().size() + " dense blocks, " + batch.sparse().size() + " sparse tables)";
        PullManyRequest.Builder request = PullManyRequest.newBuilder();
        for (PsBatch.Dense d : batch.dense()) {
            request.addDense(PullDenseRequest.newBuilder().setParam(d.param()).setBlock(d.block()));
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            long idBytes = requireBytes(what, "ids of " + t.table(), t.ids(), (long) t.n() * Long.BYTES);
            request.addSparse(PullSparseRequest.newBuilder().setTable(t.table()).setIds(Wire.view(t.ids(), idBytes)));
        }
        PullManyReply reply = call(what, deadline, s -> s.pullMany(request.build()));
        if (reply.getDenseCount() != batch.dense().size() || reply.getSparseCount() != batch.sparse().size()) {
            throw new PsException(what + " on parameter server " + endpoint + ": the reply holds " + reply.getDenseCount()
                    + " dense and " + reply.getSparseCount() + " sparse entries");
        }
        for (int i = 0; i < batch.dense().size(); i++) {
            receive(what, reply.getDense(i).getValues(), batch.dense().get(i).values());
        }
        for (int i = 0; i < batch.sparse().size(); i++) {
            receive(what, reply.getSparse(i).getValues(), batch.sparse().get(i).rows());
        }
    }

    @Override
    public void pushMany(PsBatch batch) {
        String what = "pushMany(" + batch.dense().size() + " dense blocks, " + batch.sparse().size() + " sparse tables)";
        PushManyRequest.Builder request = PushManyRequest.newBuilder();
        for (PsBatch.Dense d : batch.dense()) {
            Long numel = denseNumel.get(ControlConnection.blockKey(d.param(), d.block()));
            long bytes = numel == null ? d.values().byteSize()
                    : requireBytes(what, "gradient of " + d.param(), d.values(), numel * Float.BYTES);
            request.addDense(PushDenseRequest.newBuilder().setParam(d.param()).setBlock(d.block())
                    .setGrad(Wire.view(d.values(), bytes)));
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            Integer dim = sparseDims.get(t.table());
            long bytes = dim == null ? t.rows().byteSize()
                    : requireBytes(what, "gradients of " + t.table(), t.rows(), (long) t.n() * dim * Float.BYTES);
            long idBytes = requireBytes(what, "ids of " + t.table(), t.ids(), (long) t.n() * Long.BYTES);
            request.addSparse(PushSparseRequest.newBuilder().setTable(t.table()).setIds(Wire.view(t.ids(), idBytes))
                    .setGrads(Wire.view(t.rows(), bytes)));
        }
        call(what, deadline, s -> s.pushMany(request.build()));
    }

    @Override
    public void barrier(String name, int worker, int workers, Duration timeout) {
        call("barrier(" + name + ", worker " + worker + " of " + workers + ")", timeout.plus(deadline),
                s -> s.barrier(BarrierRequest.newBuilder().setName(name).setWorker(worker).setWorkers(workers)
                        .setTimeoutMs(timeout.toMillis()).build()));
    }

    @Override
    public void save(Path dir, SaveIdentity save) {
        org.fleet4j.pserver.grpc.proto.SaveIdentity identity = org.fleet4j.pserver.grpc.proto.SaveIdentity.newBuilder()
                .setJob(save.job()).setSaveId(save.saveId()).setEpoch(save.epoch()).setStep(save.step())
                .setIncremental(save.incremental()).build();
        call("save(" + dir + ")", deadline, s -> s.save(PathRequest.newBuilder().setDir(dir.toString()).setSave(identity)
                .build()));
    }

    @Override
    public void load(Path dir) {
        call("load(" + dir + ")", deadline, s -> s.load(PathRequest.newBuilder().setDir(dir.toString()).build()));
    }

    @Override
    public List<TableStats> stats() {
        return call("stats()", deadline, s -> s.stats(StatsRequest.getDefaultInstance())).getTablesList().stream()
                .map(t -> new TableStats(t.getTable(), t.getKind(), t.getKeys(), t.getBytes(), t.getQueueDepth(),
                        t.getPending(), t.getEvicted(), t.getFreedBytes()))
                .toList();
    }

    @Override
    public void stop() {
        call("stop()", deadline, s -> s.stop(StopRequest.getDefaultInstance()));
    }

    /** The server's own data port that Hello named (grpc++, star_server); empty: none. */
    String dataEndpoint() {
        return dataEndpoint;
    }

    /** The size of each dense block the server holds, by {@link ControlConnection#blockKey}. */
    Map<String, Long> denseNumel() {
        return denseNumel;
    }

    /** The buffer allocator of this connection's socket (null before it connected). */
    ByteBufAllocator socketAllocator() {
        return wire.allocator();
    }

    /** Counted at the socket end of this connection's Netty pipeline ({@link WireByteCounter}). */
    @Override
    public long wireBytes() {
        return wire.bytes();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(CLOSE_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        threads.shutdown(CLOSE_PATIENCE, loop, offload);
    }

    /** {@code bytes}, after checking that {@code segment} holds that many. */
    private long requireBytes(String what, String name, MemorySegment segment, long bytes) {
        if (segment.byteSize() < bytes) {
            throw new PsException(what + " for parameter server " + endpoint + ": the " + name + " buffer holds "
                    + segment.byteSize() + " bytes, " + bytes + " are needed");
        }
        return bytes;
    }

    private void receive(String what, ByteString values, MemorySegment out) {
        if (out.byteSize() < values.size()) {
            throw new PsException(what + " on parameter server " + endpoint + ": the reply holds " + values.size()
                    + " bytes, the output buffer only " + out.byteSize());
        }
        MemorySegment.copy(Wire.view(values), 0, out, 0, values.size());
    }

    private <T> T call(String what, Duration limit, Function<ParameterServerBlockingStub, T> rpc) {
        try {
            return rpc.apply(stub.withDeadlineAfter(limit.toNanos(), TimeUnit.NANOSECONDS));
        } catch (StatusRuntimeException e) {
            throw failure(what, limit, e);
        }
    }

    private PsException failure(String what, Duration limit, StatusRuntimeException e) {
        Status status = e.getStatus();
        String where = what + " on parameter server " + endpoint;
        String detail = status.getDescription() == null ? status.getCode().toString() : status.getDescription();
        String message = switch (status.getCode()) {
            case DEADLINE_EXCEEDED -> where + ": no answer within " + limit.toMillis() + " ms (" + detail
                    + "); is the server alive and reachable?";
            case UNAVAILABLE -> where + ": the server is unreachable (" + detail
                    + (status.getCause() == null ? "" : ": " + status.getCause().getMessage()) + ")";
            case CANCELLED -> {
                if (status.getCause() instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                yield where + ": cancelled (" + detail + ")";
            }
            default -> where + " failed: " + detail;
        };
        return new PsException(message, e);
    }
}
