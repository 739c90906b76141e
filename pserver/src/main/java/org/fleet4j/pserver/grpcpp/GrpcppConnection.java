package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.fleet4j.collective.JobToken;
import org.fleet4j.collective.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;

/**
 * A worker's grpc++ connection to one server: its gRPC control connection (barriers, save, load, stats, stop) and one
 * data connection per server network thread. A pull or push goes to the thread that owns what it touches; one that
 * touches several threads' ids is split into one request per owner (the ids, and a push's gradient rows, gathered
 * per owner off-heap), sent at once, and a pull's rows put back in place. A request for one owner goes out straight
 * from the caller's memory.
 */
final class GrpcppConnection implements PsConnection {
    private final String endpoint;
    private final String dataEndpoint;
    private final Duration deadline;
    private final PsConnection control;
    private final List<NetworkLoops> loops = new ArrayList<>();
    private final List<DataChannel> channels = new ArrayList<>();
    private final CopyCount copies = new CopyCount();
    private int syncWorkers;
    private Map<String, Integer> sparseDims = Map.of();

    private GrpcppConnection(String endpoint, String dataEndpoint, PsOptions options, NetworkSettings settings) {
        this.endpoint = endpoint;
        this.dataEndpoint = dataEndpoint;
        this.deadline = options.deadline();
        this.control = GrpcTransport.connect(GrpcppTransport.PROTOCOL, endpoint, options, false);
        try {
            connectData(options.token(), settings);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    static GrpcppConnection open(String endpoint, String dataEndpoint, PsOptions options, NetworkSettings settings) {
        return new GrpcppConnection(endpoint, dataEndpoint, options, settings);
    }

    /** Thread 0 first, which tells how many threads the server has; then one connection to each of the others. */
    private void connectData(JobToken token, NetworkSettings settings) {
        InetSocketAddress address = TcpStore.parseHostPort(dataEndpoint, "grpc++ data endpoint of " + endpoint);
        NetworkLoops first = new NetworkLoops(new NetworkSettings(1, settings.busyPoll(), settings.pinCores()),
                "ps-grpcpp-client-io", 0);
        loops.add(first);
        DataChannel.Hello hello = connect(first, address, 0, token);
        int threads = hello.threads();
        syncWorkers = hello.syncWorkers();
        sparseDims = hello.sparseDims();
        NetworkLoops rest = threads > 1 && settings.threads() > 1
                ? new NetworkLoops(new NetworkSettings(Math.min(settings.threads() - 1, threads - 1),
                        settings.busyPoll(), settings.pinCores()), "ps-grpcpp-client-io", 1)
                : first;
        if (rest != first) {
            loops.add(rest);
        }
        for (int t = 1; t < threads; t++) {
            connect(rest, address, t, token);
        }
    }

    /** Opens the data connection to thread {@code thread}, says Hello and checks the server's proof. */
    private DataChannel.Hello connect(NetworkLoops on, InetSocketAddress address, int thread, JobToken token) {
        String where = "parameter server " + endpoint + " (grpc++ data port " + dataEndpoint + ", thread " + thread
                + ")";
        DataChannel c = DataChannel.open(where, on.group(), address, thread, deadline, token, copies);
        channels.add(c);
        byte[] nonce = JobToken.nonce();
        DataChannel.Hello hello = c.hello(thread, nonce, deadline);
        if (token == null) {
            if (hello.session() != null) {
                throw new PsException("parameter server " + endpoint + " requires the job token and this worker has"
                        + " none; give every process of the job the same " + JobToken.ENV);
            }
        } else {
            if (hello.session() == null) {
                throw new PsException("parameter server " + endpoint + " checks no job token but this worker holds"
                        + " one; give every process of the job the same " + JobToken.ENV);
            }
            if (!token.verifies(hello.serverProof(), CallProof.SERVER, nonce, hello.session())) {
                throw new PsException("parameter server " + endpoint + " (grpc++ data port " + dataEndpoint
                        + ") does not hold this job's token (its proof does not match): it belongs to another job,"
                        + " or was given a different " + JobToken.ENV + "; check .endpoint_map");
            }
        }
        c.useSession(hello.session());
        return hello;
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    int threads() {
        return channels.size();
    }

    CopyCount copies() {
        return copies;
    }

    @Override
    public void pullDense(String param, int block, MemorySegment out) {
        String what = "pullDense(" + param + ", block " + block + ")";
        DataChannel c = channels.get(Ownership.ofBlock(param, block, threads()));
        ByteBuf frame = c.header(Frames.Call.PULL_DENSE, Frames.nameBytes(param) + 4, Frames.nameBytes(param) + 4);
        Frames.writeName(frame, param);
        frame.writeInt(block);
        ByteBuf body = c.await(c.send(frame), what, deadline);
        try {
            receive(what, body, out, 0);
        } finally {
            body.release();
        }
    }

    @Override
    public void pushDense(String param, int block, MemorySegment grad) {
        String what = "pushDense(" + param + ", block " + block + ")";
        DataChannel c = channels.get(Ownership.ofBlock(param, block, threads()));
        int head = Frames.nameBytes(param) + 4;
        ByteBuf frame = c.header(Frames.Call.PUSH_DENSE, head + grad.byteSize(), head);
        Frames.writeName(frame, param);
        frame.writeInt(block);
        c.await(c.send(Unpooled.wrappedBuffer(frame, wrap(c, grad, grad.byteSize()))), what, deadline).release();
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        String what = "pullSparse(" + table + ", " + n + " ids)";
        requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        if (n == 0) {
            return;
        }
        Split split = Split.of(ids, n, threads());
        List<CompletableFuture<ByteBuf>> replies = new ArrayList<>();
        List<Integer> owners = new ArrayList<>();
        for (int t = 0; t < threads(); t++) {
            int k = split.count(t);
            if (k == 0) {
                continue;
            }
            owners.add(t);
            DataChannel c = channels.get(t);
            int head = Frames.nameBytes(table) + 4;
            ByteBuf frame = c.header(Frames.Call.PULL_SPARSE, head + (long) k * Long.BYTES, head);
            Frames.writeName(frame, table);
            frame.writeInt(k);
            ByteBuf idBytes = split.whole() ? wrap(c, ids, (long) n * Long.BYTES) : split.ids(c, ids, t, copies);
            replies.add(c.send(Unpooled.wrappedBuffer(frame, idBytes)));
        }
        List<ByteBuf> bodies = channels.get(0).awaitAll(replies, what, deadline);
        try {
            for (int i = 0; i < bodies.size(); i++) {
                if (split.whole()) {
                    receive(what, bodies.get(i), out, 0);
                } else {
                    split.scatterRows(bodies.get(i), out, owners.get(i), what);
                }
            }
        } finally {
            bodies.forEach(ByteBuf::release);
        }
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        String what = "pushSparse(" + table + ", " + n + " ids)";
        requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        if (n == 0 && syncWorkers == 0) {
            return;
        }
        Integer dim = sparseDims.get(table);
        long rowBytes = n == 0 ? 0 : dim == null ? grads.byteSize() / n : (long) dim * Float.BYTES;
        requireBytes(what, "gradients", grads, n * rowBytes);
        Split split = syncWorkers > 0 ? Split.all(n, Ownership.ofTable(table, threads()), threads())
                : Split.of(ids, n, threads());
        List<CompletableFuture<ByteBuf>> replies = new ArrayList<>();
        for (int t = 0; t < threads(); t++) {
            int k = split.count(t);
            if (k == 0 && !(syncWorkers > 0 && split.owner() == t)) {
                continue;
            }
            DataChannel c = channels.get(t);
            int head = Frames.nameBytes(table) + 4;
            ByteBuf frame = c.header(Frames.Call.PUSH_SPARSE, head + (long) k * (Long.BYTES + rowBytes), head);
            Frames.writeName(frame, table);
            frame.writeInt(k);
            CompositeByteBuf request = Unpooled.compositeBuffer(3).addComponent(true, frame);
            if (split.whole()) {
                request.addComponents(true, wrap(c, ids, (long) n * Long.BYTES), wrap(c, grads, n * rowBytes));
            } else {
                request.addComponents(true, split.ids(c, ids, t, copies), split.rows(c, grads, rowBytes, t, copies));
            }
            replies.add(c.send(request));
        }
        channels.get(0).awaitAll(replies, what, deadline).forEach(ByteBuf::release);
    }

    /** The first {@code bytes} of {@code segment} as a buffer over the same memory; copied only from the heap. */
    private ByteBuf wrap(DataChannel c, MemorySegment segment, long bytes) {
        MemorySegment part = segment.asSlice(0, bytes);
        if (part.isNative()) {
            return Unpooled.wrappedBuffer(part.asByteBuffer());
        }
        copies.heap(bytes);
        ByteBuf copy = c.alloc((int) bytes);
        MemorySegment.copy(part, 0, MemorySegment.ofBuffer(copy.nioBuffer(0, (int) bytes)), 0, bytes);
        return copy.writerIndex((int) bytes);
    }

    private void receive(String what, ByteBuf body, MemorySegment out, long at) {
        long bytes = body.readableBytes();
        if (out.byteSize() - at < bytes) {
            throw new PsException(what + " on parameter server " + endpoint + ": the reply holds " + bytes
                    + " bytes, the output buffer only " + (out.byteSize() - at));
        }
        if (!out.isNative()) {
            copies.heap(bytes);
        }
        MemorySegment.copy(MemorySegment.ofBuffer(body.nioBuffer()), 0, out, at, bytes);
    }

    private void requireBytes(String what, String name, MemorySegment segment, long bytes) {
        if (segment.byteSize() < bytes) {
            throw new PsException(what + " for parameter server " + endpoint + ": the " + name + " buffer holds "
                    + segment.byteSize() + " bytes, " + bytes + " are needed");
        }
    }

    @Override
    public void barrier(String name, int worker, int workers, Duration timeout) {
        control.barrier(name, worker, workers, timeout);
    }

    @Override
    public void save(Path dir) {
        control.save(dir);
    }

    @Override
    public void load(Path dir) {
        control.load(dir);
    }

    @Override
    public List<TableStats> stats() {
        return control.stats();
    }

    @Override
    public void stop() {
        control.stop();
    }

    @Override
    public void close() {
        channels.forEach(DataChannel::close);
        loops.forEach(NetworkLoops::close);
        if (control != null) {
            control.close();
        }
    }

    /** Which ids of a request go to which server thread, and where each came from. */
    private static final class Split {
        private final int[] counts;
        /** Per thread, the positions of its ids in the request, in order. */
        private final int[][] positions;
        private final int owner;

        private Split(int[] counts, int[][] positions, int owner) {
            this.counts = counts;
            this.positions = positions;
            this.owner = owner;
        }

        /** Every id to {@code owner}. */
        static Split all(int n, int owner, int threads) {
            int[] counts = new int[threads];
            counts[owner] = n;
            return new Split(counts, null, owner);
        }

        static Split of(MemorySegment ids, int n, int threads) {
            int[] owners = new int[n];
            int[] counts = new int[threads];
            for (int i = 0; i < n; i++) {
                owners[i] = Ownership.ofId(ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i), threads);
                counts[owners[i]]++;
            }
            for (int t = 0; t < threads; t++) {
                if (counts[t] == n) {
                    return new Split(counts, null, t);
                }
            }
            int[][] positions = new int[threads][];
            for (int t = 0; t < threads; t++) {
                positions[t] = new int[counts[t]];
            }
            int[] fill = new int[threads];
            for (int i = 0; i < n; i++) {
                positions[owners[i]][fill[owners[i]]++] = i;
            }
            return new Split(counts, positions, -1);
        }

        /** True when one thread owns all ids: the request goes out as the caller gave it. */
        boolean whole() {
            return positions == null;
        }

        int owner() {
            return owner;
        }

        int count(int thread) {
            return counts[thread];
        }

        ByteBuf ids(DataChannel c, MemorySegment ids, int thread, CopyCount copies) {
            int[] at = positions[thread];
            ByteBuf out = c.alloc(at.length * Long.BYTES);
            MemorySegment dst = MemorySegment.ofBuffer(out.nioBuffer(0, at.length * Long.BYTES));
            for (int i = 0; i < at.length; i++) {
                dst.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i,
                        ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, at[i]));
            }
            copies.gathered((long) at.length * Long.BYTES);
            return out.writerIndex(at.length * Long.BYTES);
        }

        ByteBuf rows(DataChannel c, MemorySegment rows, long rowBytes, int thread, CopyCount copies) {
            int[] at = positions[thread];
            int bytes = (int) (at.length * rowBytes);
            ByteBuf out = c.alloc(bytes);
            MemorySegment dst = MemorySegment.ofBuffer(out.nioBuffer(0, bytes));
            for (int i = 0; i < at.length; i++) {
                MemorySegment.copy(rows, at[i] * rowBytes, dst, i * rowBytes, rowBytes);
            }
            copies.gathered(bytes);
            return out.writerIndex(bytes);
        }

        void scatterRows(ByteBuf body, MemorySegment out, int thread, String what) {
            int[] at = positions[thread];
            long bytes = body.readableBytes();
            if (at.length == 0 || bytes % at.length != 0) {
                throw new PsException(what + ": a reply of " + bytes + " bytes for " + at.length + " ids");
            }
            long rowBytes = bytes / at.length;
            MemorySegment src = MemorySegment.ofBuffer(body.nioBuffer());
            for (int i = 0; i < at.length; i++) {
                MemorySegment.copy(src, i * rowBytes, out, at[i] * rowBytes, rowBytes);
            }
        }
    }
}
