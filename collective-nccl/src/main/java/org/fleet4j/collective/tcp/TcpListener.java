package org.fleet4j.collective.tcp;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.RateLimitedLog;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.text.Quoted;

/**
 * A group's listening port. One thread accepts connections and reads each one's hello without blocking on any of
 * them. The handshake proves the job token both ways without sending it:
 * <ol>
 *   <li>listener, on accept: a fresh nonce</li>
 *   <li>dialler: a length-prefixed hello with the group name, its rank, its own nonce and
 *       HMAC(token, DIAL_PROOF, job, group, rank, listener nonce, dialler nonce)</li>
 *   <li>listener: HMAC(token, ACCEPT_PROOF, job, group, rank, dialler nonce, listener nonce), so the dialler knows
 *       it reached its own job</li>
 * </ol>
 * A connection whose hello checks out is handed to the transport with its rank, with not one byte after the hello
 * consumed; anything else (random bytes, a wrong proof, another group's hello, silence for
 * {@link #HELLO_TIMEOUT_NANOS}) is closed with a rate-limited log line, and the listener carries on.
 */
final class TcpListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TcpListener.class.getName());
    /** One for every listener of this process: a flood at many ports is still one flood on the console. */
    private static final RateLimitedLog REJECTIONS = new RateLimitedLog(LOG, 5, 10, TimeUnit.SECONDS);
    static final byte HELLO = 1;
    private static final String DIAL_PROOF = "fleet4j-tcp-dial";
    private static final String ACCEPT_PROOF = "fleet4j-tcp-accept";
    private static final long HELLO_TIMEOUT_NANOS = 10_000_000_000L;
    /** No real hello comes near this; a longer length prefix is garbage and is refused before allocating. */
    private static final int MAX_HELLO_BYTES = 64 << 10;

    /** Receives a connection whose hello named {@code rank}; false if that rank is already connected. */
    interface Admission {
        boolean admit(int rank, SocketChannel channel);
    }

    /** A connection whose hello is still being read. */
    private static final class Pending {
        final long deadline = System.nanoTime() + HELLO_TIMEOUT_NANOS;
        final byte[] nonce = JobToken.nonce();
        final ByteBuffer length = ByteBuffer.allocate(4);
        ByteBuffer body;
    }

    private final GroupContext ctx;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Admission admission;
    private final IntPredicate connected;
    private final Thread thread;
    private volatile boolean closing;

    /**
     * Listens on the group's bind host, on a port the kernel picks. {@code connected} says whether a rank already
     * has a connection (a second hello from it is refused).
     */
    TcpListener(GroupContext ctx, int socketBufferBytes, Admission admission, IntPredicate connected) {
        this.ctx = ctx;
        this.admission = admission;
        this.connected = connected;
        try {
            server = ServerSocketChannel.open();
            // set before bind so that accepted sockets inherit it and the window scale is negotiated for it
            server.setOption(StandardSocketOptions.SO_RCVBUF, socketBufferBytes);
            server.bind(new InetSocketAddress(ctx.bindHost(), 0));
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            throw new CollectiveException("cannot listen on " + ctx.bindHost() + " for " + ctx + ": " + e, e);
        }
        thread = Thread.ofPlatform().daemon().name("fleet4j-" + ctx.name() + "-accept").start(this::loop);
    }

    int port() {
        try {
            return ((InetSocketAddress) server.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new CollectiveException("listening port of " + ctx + " is unknown: " + e, e);
        }
    }

    private void loop() {
        try {
            while (!closing) {
                selector.select(1000);
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept();
                    } else if (key.isReadable()) {
                        readHello(key);
                    }
                }
                selector.selectedKeys().clear();
                expireSilent();
            }
        } catch (IOException | RuntimeException e) {
            if (!closing) {
                LOG.log(System.Logger.Level.ERROR, ctx + ": listener stopped: " + e);
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel ch = server.accept();
        if (ch == null) {
            return;
        }
        ch.configureBlocking(false);
        Pending p = new Pending();
        SelectionKey key = ch.register(selector, SelectionKey.OP_READ, p);
        try {
            if (ch.write(ByteBuffer.wrap(p.nonce)) != p.nonce.length) {
                // a fresh connection's send buffer holds far more than a nonce; anything else is not worth waiting for
                reject(key, "could not send the challenge");
            }
        } catch (IOException e) {
            // a stranger that resets at once must not stop the listener
            reject(key, "could not send the challenge: " + e);
        }
    }

    private void readHello(SelectionKey key) {
        SocketChannel ch = (SocketChannel) key.channel();
        Pending p = (Pending) key.attachment();
        try {
            if (p.body == null) {
                if (ch.read(p.length) < 0) {
                    reject(key, "closed before its hello was complete");
                    return;
                }
                if (p.length.hasRemaining()) {
                    return;
                }
                int n = p.length.flip().getInt();
                if (n < 1 || n > MAX_HELLO_BYTES) {
                    reject(key, "first frame claims " + n + " bytes; a hello has 1.." + MAX_HELLO_BYTES);
                    return;
                }
                p.body = ByteBuffer.allocate(n);
            }
            if (ch.read(p.body) < 0) {
                reject(key, "closed before its hello was complete");
                return;
            }
            if (p.body.hasRemaining()) {
                return;
            }
            p.body.flip();
            Hello hello = Hello.parse(p.body);
            String problem = hello == null ? "malformed hello" : check(hello, p.nonce);
            if (problem != null) {
                reject(key, problem);
                return;
            }
            ByteBuffer answer = ByteBuffer.wrap(ctx.jobToken().proof(ACCEPT_PROOF, job(ctx), hello.group, rankBytes(hello.rank),
                    hello.nonce, p.nonce));
            if (ch.write(answer) != answer.capacity()) {
                reject(key, "could not send the answer to its hello");
                return;
            }
            key.cancel();
            if (!admission.admit(hello.rank, ch)) {
                REJECTIONS.warn(ctx + ": closed connection from " + remote(ch) + ": second hello from rank " + hello.rank);
                ch.close();
            }
        } catch (IOException e) {
            reject(key, e.toString());
        }
    }

    /** A dialler's hello: HELLO, group name (length-prefixed), rank, nonce, proof. */
    private record Hello(byte[] group, int rank, byte[] nonce, byte[] proof) {
        /** Null when the frame does not have that shape. */
        static Hello parse(ByteBuffer f) {
            if (f.remaining() < 1 + 4 || f.get() != HELLO) {
                return null;
            }
            int nameLen = f.getInt();
            if (nameLen < 0 || nameLen != f.remaining() - 4 - JobToken.NONCE_BYTES - JobToken.PROOF_BYTES) {
                return null;
            }
            byte[] group = new byte[nameLen];
            f.get(group);
            int rank = f.getInt();
            byte[] nonce = new byte[JobToken.NONCE_BYTES];
            f.get(nonce);
            byte[] proof = new byte[JobToken.PROOF_BYTES];
            f.get(proof);
            return new Hello(group, rank, nonce, proof);
        }
    }

    /** Null when the hello proves the job token, for this group, from a rank that should dial us; else what is wrong. */
    private String check(Hello h, byte[] ourNonce) {
        if (!ctx.jobToken().verifies(h.proof, DIAL_PROOF, job(ctx), h.group, rankBytes(h.rank), ourNonce, h.nonce)) {
            return "wrong job token (not a member of job '" + ctx.jobId() + "')";
        }
        String group = new String(h.group, StandardCharsets.UTF_8);
        if (!group.equals(ctx.name())) {
            return "hello for group " + Quoted.of(group) + " on the port of group " + Quoted.of(ctx.name());
        }
        if (h.rank <= ctx.rank() || h.rank >= ctx.size()) {
            return "hello from rank " + h.rank + ", expected one of " + (ctx.rank() + 1) + ".." + (ctx.size() - 1);
        }
        if (connected.test(h.rank)) {
            return "second hello from rank " + h.rank;
        }
        return null;
    }

    private void expireSilent() {
        long now = System.nanoTime();
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && key.attachment() instanceof Pending p && now - p.deadline > 0) {
                reject(key, "no hello within " + HELLO_TIMEOUT_NANOS / 1_000_000 + " ms");
            }
        }
    }

    private void reject(SelectionKey key, String why) {
        SocketChannel ch = (SocketChannel) key.channel();
        REJECTIONS.warn(ctx + ": closed connection from " + remote(ch) + ": " + why);
        key.cancel();
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing a connection we refuse; nothing more to tell anyone
        }
    }

    private static String remote(SocketChannel ch) {
        try {
            return String.valueOf(ch.getRemoteAddress());
        } catch (IOException e) {
            return "an unknown address";
        }
    }

    /**
     * The dialler's side of the handshake on a connection to rank {@code peer}'s listener: reads the challenge, says
     * hello and checks the answer, reading not one byte more. Fails when the listener does not prove the job token.
     */
    static void introduce(InputStream in, OutputStream out, GroupContext ctx, int peer) throws IOException {
        DataInputStream data = new DataInputStream(in);
        byte[] theirNonce = new byte[JobToken.NONCE_BYTES];
        data.readFully(theirNonce);
        byte[] name = ctx.name().getBytes(StandardCharsets.UTF_8);
        byte[] ourNonce = JobToken.nonce();
        byte[] rank = rankBytes(ctx.rank());
        byte[] proof = ctx.jobToken().proof(DIAL_PROOF, job(ctx), name, rank, theirNonce, ourNonce);
        int body = 1 + 4 + name.length + 4 + ourNonce.length + proof.length;
        ByteBuffer hello = ByteBuffer.allocate(4 + body);
        hello.putInt(body).put(HELLO).putInt(name.length).put(name).put(rank).put(ourNonce).put(proof);
        out.write(hello.array());
        out.flush();
        byte[] answer = new byte[JobToken.PROOF_BYTES];
        data.readFully(answer);
        if (!ctx.jobToken().verifies(answer, ACCEPT_PROOF, job(ctx), name, rank, ourNonce, theirNonce)) {
            throw new IOException("rank " + peer + "'s port does not prove this job's token: it belongs to another job");
        }
    }

    private static byte[] job(GroupContext ctx) {
        return ctx.jobId().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] rankBytes(int rank) {
        return ByteBuffer.allocate(4).putInt(rank).array();
    }

    @Override
    public void close() {
        closing = true;
        selector.wakeup();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            for (SelectionKey key : selector.keys()) {
                if (key.isValid()) { // cancelled keys belong to admitted connections, now the transport's
                    key.channel().close();
                }
            }
            selector.close();
            server.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, ctx + ": closing the listener failed: " + e);
        }
    }
}
