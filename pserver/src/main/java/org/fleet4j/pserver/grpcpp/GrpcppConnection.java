package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;

/**
 * A worker's grpc++ connection to one server: its gRPC control connection (barriers, save, load, stats, stop) and one
 * data connection per server network thread. A pull or push goes to the thread that owns what it touches (the server's
 * tables are split over its network threads by {@link KeyHash}'s functions for their count, which this uses too); one
 * that touches several threads' ids is split into one request per owner (the ids, and a push's gradient rows, gathered
 * per owner off-heap), sent at once, and a pull's rows put back in place. A request for one owner goes out straight
 * from the caller's memory.
 *
 * <p>{@link #pullMany} and {@link #pushMany} (a fused step: tensor_fuse, and the star_server protocols) send the
 * whole step for this server as one frame, on the connection to the server thread that Hello made this worker's home;
 * that thread hands each entry to its owner. With {@code overlapPushes} (star_server_lite) a push is copied and held,
 * and goes out right behind the next pull, both in flight at once: the server answers the pull first, so it does not
 * see that push (one step stale). Any other call sends a held push first and waits for it.
 *
 * <p>Otherwise, where the server applies pushes as they come (not a sync-mode server), a push returns once its frames
 * are written to the socket (so the caller may write over its ids and gradients), not once answered: the next pull
 * goes out behind it without a round trip between them. Reads still follow this worker's writes: a fused push and the
 * next fused pull share the home connection, and a single push and the next single pull of the same ids or block
 * share their owner's connection; the server reads a connection's frames in order, and its owners run each one's
 * parts in order (one queue per owner), so the push is applied before the pull is served. The push's answer is
 * awaited later: its failure is thrown by the next call that finds it (naming the push). A call that could overtake
 * it (another connection's, a barrier, save, stats, stop) first waits for every push; so does {@link #awaitPushes}.
 */
final class GrpcppConnection implements PsConnection {
    private static final System.Logger LOG = System.getLogger(GrpcppConnection.class.getName());
    /** The most pushes left unanswered at once; the oldest is awaited beyond it. */
    private static final int MAX_UNANSWERED = 16;

    private final String protocol;
    private final String endpoint;
    private final Duration deadline;
    private final boolean overlapPushes;
    private final List<NetworkLoops> loops = new ArrayList<>();
    private final List<DataChannel> channels = new ArrayList<>();
    private final CopyCount copies = new CopyCount();
    private final LongAdder wireBytes = new LongAdder();
    /** star_server_lite: the last push's frame body, a copy, not yet sent. */
    private final AtomicReference<ByteBuf> heldPush = new AtomicReference<>();
    /** Pushes written and not yet answered, oldest first (see the class comment); guarded by itself. */
    private final ArrayDeque<Unanswered> unanswered = new ArrayDeque<>();
    /** True when a push returns once written: not star_server_lite, and the server is not in sync mode. */
    private boolean pipelines;
    private final PsConnection control;
    private String dataEndpoint;
    private StepFrames.Sizes sizes;
    private int syncWorkers;
    private Map<String, Integer> sparseDims = Map.of();
    /** The server thread this worker sends its fused steps to. */
    private int home;

    /**
     * Connects over {@code protocol}; {@code dataEndpoint} null: the data port that the server's Hello names.
     */
    private GrpcppConnection(String protocol, String endpoint, String dataEndpoint, PsOptions options,
                             NetworkSettings settings, boolean overlapPushes) {
        this.protocol = protocol;
        this.endpoint = endpoint;
        this.deadline = options.deadline();
        this.overlapPushes = overlapPushes;
        GrpcTransport.ControlConnection hello = GrpcTransport.connectControl(protocol, endpoint, options);
        this.control = hello.calls();
        try {
            this.dataEndpoint = dataEndpoint != null ? dataEndpoint : hello.dataEndpoint();
            if (this.dataEndpoint.isEmpty()) {
                throw new PsException("parameter server " + endpoint + " (" + protocol + ") named no data port in its"
                        + " Hello; list it in " + EndpointMap.FILE + " as " + endpoint + "=HOST:DATA_PORT");
            }
            connectData(options.token(), settings);
            sizes = new StepFrames.Sizes(hello.denseNumel(), sparseDims);
            pipelines = !overlapPushes && syncWorkers == 0;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    static GrpcppConnection open(String protocol, String endpoint, String dataEndpoint, PsOptions options,
                                 NetworkSettings settings, boolean overlapPushes) {
        return new GrpcppConnection(protocol, endpoint, dataEndpoint, options, settings, overlapPushes);
    }

    /**
     * Thread 0 first, which tells how many threads the server has; then one connection to each of the others. With no
     * network threads ({@code NETWORK_WORKER_CORE_NUMBER=0}) the callers do their connections' I/O themselves.
     */
    private void connectData(JobToken token, NetworkSettings settings) {
        InetSocketAddress address = TcpStore.parseHostPort(dataEndpoint, "grpc++ data endpoint of " + endpoint);
        NetworkLoops first = settings.threads() == 0 ? null
                : new NetworkLoops(new NetworkSettings(1, settings.busyPoll(), settings.pinCores()),
                        "ps-grpcpp-client-io", 0);
        if (first != null) {
            loops.add(first);
        }
        DataChannel.Hello hello = connect(first, settings.busyPoll(), address, 0, token);
        int threads = hello.threads();
        syncWorkers = hello.syncWorkers();
        sparseDims = hello.sparseDims();
        home = hello.home();
        NetworkLoops rest = first != null && threads > 1 && settings.threads() > 1
                ? new NetworkLoops(new NetworkSettings(Math.min(settings.threads() - 1, threads - 1),
                        settings.busyPoll(), settings.pinCores()), "ps-grpcpp-client-io", 1)
                : first;
        if (rest != first) {
            loops.add(rest);
        }
        for (int t = 1; t < threads; t++) {
            connect(rest, settings.busyPoll(), address, t, token);
        }
    }

    /** Opens the data connection to thread {@code thread}, says Hello and checks the server's proof. */
    private DataChannel.Hello connect(NetworkLoops on, boolean busyPoll, InetSocketAddress address, int thread,
                                      JobToken token) {
        // grpc++ names its data port and thread; the star_server protocols, which had one port before, the server
        String where = GrpcppTransport.PROTOCOL.equals(protocol) ? "parameter server " + endpoint
                + " (grpc++ data port " + dataEndpoint + ", thread " + thread + ")" : "parameter server " + endpoint;
        DataChannel c = DataChannel.open(where, on, busyPoll, address, deadline, token, copies, wireBytes);
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

    /** Every wait for the server (a write, a reply) is bounded by the connection's deadline, and so is connecting. */
    @Override
    public boolean boundsItsCalls() {
        return true;
    }

    int threads() {
        return channels.size();
    }

    /** True when a push returns once written, its answer awaited later (see the class comment). */
    boolean pipelines() {
        return pipelines;
    }

    /** The server thread this worker's fused steps go to. */
    int home() {
        return home;
    }

    CopyCount copies() {
        return copies;
    }

    @Override
    public void pullDense(String param, int block, MemorySegment out) {
        sendHeldPush();
        awaitPushesBut(Behind.OWNERS);
        finish(sendPullDense(param, block, out));
        finishAnswered();
    }

    @Override
    public void pushDense(String param, int block, MemorySegment grad) {
        sendHeldPush();
        awaitPushesBut(Behind.OWNERS);
        List<CompletableFuture<Void>> written = pipelines ? new ArrayList<>() : null;
        pushed(Behind.OWNERS, sendPushDense(param, block, grad, written), written);
    }

    @Override
    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        sendHeldPush();
        awaitPushesBut(Behind.OWNERS);
        finish(sendPullSparse(table, ids, n, out));
        finishAnswered();
    }

    @Override
    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        sendHeldPush();
        awaitPushesBut(Behind.OWNERS);
        List<CompletableFuture<Void>> written = pipelines ? new ArrayList<>() : null;
        pushed(Behind.OWNERS, sendPushSparse(table, ids, n, grads, written), written);
    }

    /**
     * The step's pulls for this server as one PULL_MANY frame to the home thread, straight from the caller's ids;
     * a held push (star_server_lite) goes right behind it, and both replies are awaited.
     */
    @Override
    public void pullMany(PsBatch batch) {
        String what = "pullMany(" + batch.dense().size() + " dense blocks, " + batch.sparse().size()
                + " sparse tables)";
        String here = what + " on parameter server " + endpoint;
        DataChannel c = channels.get(home);
        awaitPushesBut(Behind.FUSED);
        ByteBuf body = StepFrames.pullBody(c, batch, here);
        Sent pull = new Sent(what, List.of(send(c, Frames.Call.PULL_MANY, body, null)),
                bodies -> StepFrames.scatter(bodies.getFirst(), batch, sizes, here));
        ByteBuf push = heldPush.getAndSet(null);
        if (push == null) {
            finish(pull);
            finishAnswered();
            return;
        }
        Sent pushed = new Sent("pushMany (the previous step's, sent behind " + what + ")",
                List.of(send(c, Frames.Call.PUSH_MANY, push, null)), bodies -> { });
        finishAll(List.of(pull, pushed));
    }

    /**
     * The step's gradients for this server as one PUSH_MANY frame to the home thread, from the caller's memory;
     * answered once the server has applied every entry, which the next pull on the home connection follows (where
     * pushes pipeline, it returns once written). star_server_lite instead copies the frame's body and holds it for
     * the next pull.
     */
    @Override
    public void pushMany(PsBatch batch) {
        String what = "pushMany(" + batch.dense().size() + " dense blocks, " + batch.sparse().size()
                + " sparse tables)";
        DataChannel c = channels.get(home);
        sendHeldPush();
        awaitPushesBut(Behind.FUSED);
        ByteBuf body = StepFrames.pushBody(c, batch, sizes, what + " for parameter server " + endpoint);
        if (!overlapPushes) {
            List<CompletableFuture<Void>> written = pipelines ? new ArrayList<>() : null;
            pushed(Behind.FUSED, new Sent(what, List.of(send(c, Frames.Call.PUSH_MANY, body, written)),
                    bodies -> { }), written);
            return;
        }
        try {
            ByteBuf copy = c.alloc(body.readableBytes());
            heldPush.set(copy.writeBytes(body));
        } finally {
            body.release();
        }
    }

    /**
     * A request of {@code call} with {@code body} (released once written), signed as it goes out; where
     * {@code written} is not null, a future done once it is written is added to it.
     */
    private CompletableFuture<ByteBuf> send(DataChannel c, Frames.Call call, ByteBuf body,
                                            List<CompletableFuture<Void>> written) {
        ByteBuf header = c.header(call, body.readableBytes(), 0);
        return send(c, Unpooled.wrappedBuffer(header, body), written);
    }

    /** {@code frame} on {@code c}; where {@code written} is not null, a future done once it is written is added to it. */
    private static CompletableFuture<ByteBuf> send(DataChannel c, ByteBuf frame,
                                                   List<CompletableFuture<Void>> written) {
        if (written == null) {
            return c.send(frame);
        }
        CompletableFuture<Void> w = new CompletableFuture<>();
        written.add(w);
        return c.send(frame, w);
    }

    /** Sends a held push and waits for it, so that the call after it sees it applied. */
    private void sendHeldPush() {
        ByteBuf push = heldPush.getAndSet(null);
        if (push != null) {
            finish(new Sent("pushMany (held for the next pull)", List.of(send(channels.get(home),
                    Frames.Call.PUSH_MANY, push, null)), bodies -> { }));
        }
    }

    /** Which calls may go out behind an unanswered push: fused ones on the home connection, or single ones. */
    private enum Behind { FUSED, OWNERS }

    /** A push written and not yet answered, and which calls may go out behind it. */
    private record Unanswered(Behind kind, Sent sent) {
    }

    /**
     * A push's frames are on their way: where pushes pipeline, waits until they are written (the caller may then write
     * over its buffers) and leaves the answer for later; otherwise waits for the answer.
     */
    private void pushed(Behind kind, Sent sent, List<CompletableFuture<Void>> written) {
        if (written == null || sent.replies().isEmpty()) {
            finish(sent);
            return;
        }
        try {
            channels.get(0).awaitWritten(CompletableFuture.allOf(written.toArray(CompletableFuture[]::new)),
                    sent.what(), deadline);
        } catch (RuntimeException e) {
            releaseWhenDone(List.of(sent));
            throw e;
        }
        Sent later = new Sent(sent.what() + " (answered after it returned)", sent.replies(), sent.onReplies());
        List<Sent> oldest = new ArrayList<>();
        synchronized (unanswered) {
            unanswered.add(new Unanswered(kind, later));
            while (unanswered.size() > MAX_UNANSWERED) {
                oldest.add(unanswered.poll().sent());
            }
        }
        finishAll(oldest);
    }

    /**
     * Waits for every unanswered push unless all are of kind {@code allowed} (null: waits for all), so that a call that
     * is not ordered behind them on the server cannot overtake them.
     */
    private void awaitPushesBut(Behind allowed) {
        List<Sent> wait = new ArrayList<>();
        synchronized (unanswered) {
            if (unanswered.isEmpty() || allowed != null
                    && unanswered.stream().allMatch(u -> u.kind() == allowed)) {
                return;
            }
            unanswered.forEach(u -> wait.add(u.sent()));
            unanswered.clear();
        }
        finishAll(wait);
    }

    /** Hands on the unanswered pushes whose answers have come (a pull behind them on their connection has returned). */
    private void finishAnswered() {
        List<Sent> done = new ArrayList<>();
        synchronized (unanswered) {
            for (var it = unanswered.iterator(); it.hasNext(); ) {
                Unanswered u = it.next();
                if (u.sent().replies().stream().allMatch(CompletableFuture::isDone)) {
                    done.add(u.sent());
                    it.remove();
                }
            }
        }
        finishAll(done);
    }

    /** The pushes written and not yet answered; star_server_lite's held push stays held (one step stale on purpose). */
    @Override
    public void awaitPushes() {
        awaitPushesBut(null);
    }

    /** Before a call that nothing orders behind the pushes on the server: sends a held push, waits for every push. */
    private void settlePushes() {
        sendHeldPush();
        awaitPushesBut(null);
    }

    /** Requests on their way and what their replies' bodies are for (nothing for a push). */
    private record Sent(String what, List<CompletableFuture<ByteBuf>> replies, Consumer<List<ByteBuf>> onReplies) {
    }

    /** Waits for a call's replies, hands them on and releases them. */
    private void finish(Sent sent) {
        if (sent.replies().isEmpty()) {
            return;
        }
        List<ByteBuf> bodies = channels.get(0).awaitAll(sent.replies(), sent.what(), deadline);
        try {
            sent.onReplies().accept(bodies);
        } finally {
            bodies.forEach(ByteBuf::release);
        }
    }

    /** {@link #finish} for each in turn; after a failure the other replies are released as they come. */
    private void finishAll(List<Sent> sent) {
        for (int i = 0; i < sent.size(); i++) {
            try {
                finish(sent.get(i));
            } catch (RuntimeException e) {
                releaseWhenDone(sent.subList(i + 1, sent.size()));
                throw e;
            }
        }
    }

    private static void releaseWhenDone(List<Sent> sent) {
        sent.forEach(s -> s.replies().forEach(r -> r.thenAccept(ByteBuf::release)));
    }

    /** Requests sent on the connection to server thread {@code thread} and not yet answered. */
    int inFlight(int thread) {
        return channels.get(thread).inFlight();
    }

    private Sent sendPullDense(String param, int block, MemorySegment out) {
        String what = "pullDense(" + param + ", block " + block + ")";
        DataChannel c = channels.get(KeyHash.ownerOfBlock(param, block, threads()));
        ByteBuf frame = c.header(Frames.Call.PULL_DENSE, Frames.nameBytes(param) + 4, Frames.nameBytes(param) + 4);
        Frames.writeName(frame, param);
        frame.writeInt(block);
        return new Sent(what, List.of(c.send(frame)), bodies -> receive(what, bodies.getFirst(), out, 0));
    }

    private Sent sendPushDense(String param, int block, MemorySegment grad, List<CompletableFuture<Void>> written) {
        String what = "pushDense(" + param + ", block " + block + ")";
        DataChannel c = channels.get(KeyHash.ownerOfBlock(param, block, threads()));
        int head = Frames.nameBytes(param) + 4;
        ByteBuf frame = c.header(Frames.Call.PUSH_DENSE, head + grad.byteSize(), head);
        Frames.writeName(frame, param);
        frame.writeInt(block);
        return new Sent(what, List.of(send(c, Unpooled.wrappedBuffer(frame, c.wrap(grad, grad.byteSize())), written)),
                bodies -> { });
    }

    private Sent sendPullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        String what = "pullSparse(" + table + ", " + n + " ids)";
        requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        if (n == 0) {
            return new Sent(what, List.of(), bodies -> { });
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
            ByteBuf idBytes = split.whole() ? c.wrap(ids, (long) n * Long.BYTES) : split.ids(c, ids, t, copies);
            replies.add(c.send(Unpooled.wrappedBuffer(frame, idBytes)));
        }
        return new Sent(what, replies, bodies -> {
            for (int i = 0; i < bodies.size(); i++) {
                if (split.whole()) {
                    receive(what, bodies.get(i), out, 0);
                } else {
                    split.scatterRows(bodies.get(i), out, owners.get(i), what);
                }
            }
        });
    }

    private Sent sendPushSparse(String table, MemorySegment ids, int n, MemorySegment grads,
                                List<CompletableFuture<Void>> written) {
        String what = "pushSparse(" + table + ", " + n + " ids)";
        requireBytes(what, "ids", ids, (long) n * Long.BYTES);
        if (n == 0 && syncWorkers == 0) {
            return new Sent(what, List.of(), bodies -> { });
        }
        Integer dim = sparseDims.get(table);
        long rowBytes = n == 0 ? 0 : dim == null ? grads.byteSize() / n : (long) dim * Float.BYTES;
        requireBytes(what, "gradients", grads, n * rowBytes);
        Split split = syncWorkers > 0 ? Split.all(n, KeyHash.ownerOfSteps(table, threads()), threads())
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
                request.addComponents(true, c.wrap(ids, (long) n * Long.BYTES), c.wrap(grads, n * rowBytes));
            } else {
                request.addComponents(true, split.ids(c, ids, t, copies), split.rows(c, grads, rowBytes, t, copies));
            }
            replies.add(send(c, request, written));
        }
        return new Sent(what, replies, bodies -> { });
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
        settlePushes();
        control.barrier(name, worker, workers, timeout);
    }

    @Override
    public void save(Path dir, SaveIdentity save) {
        settlePushes();
        control.save(dir, save);
    }

    @Override
    public void load(Path dir) {
        settlePushes();
        control.load(dir);
    }

    @Override
    public List<TableStats> stats() {
        settlePushes();
        return control.stats();
    }

    @Override
    public void stop() {
        settlePushes();
        control.stop();
    }

    /** The control connection's bytes and every data connection's frames, both ways. */
    @Override
    public long wireBytes() {
        return control.wireBytes() + wireBytes.sum();
    }

    @Override
    public void close() {
        boolean unsettled;
        synchronized (unanswered) {
            unsettled = !unanswered.isEmpty();
        }
        if (heldPush.get() != null || unsettled) {
            try {
                settlePushes();
            } catch (PsException e) {
                LOG.log(System.Logger.Level.WARNING, "closing the connection to parameter server " + endpoint
                        + ": the last push was not applied: " + e.getMessage());
            }
        }
        channels.forEach(DataChannel::close);
        loops.forEach(NetworkLoops::close);
        control.close();
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
                owners[i] = KeyHash.threadOf(ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i), threads);
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
