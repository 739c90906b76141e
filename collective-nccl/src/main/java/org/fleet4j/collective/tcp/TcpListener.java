package org.fleet4j.collective.tcp;

import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.GroupContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.function.IntPredicate;

/**
 * A group's listening port. One thread accepts connections and reads each one's hello without blocking on any of
 * them: a length-prefixed frame with the job token, the group name and the dialling rank. A connection whose hello
 * checks out is handed to the transport with its rank, with not one byte after the hello consumed; anything else
 * (random bytes, a wrong token, another group's hello, silence for {@link #HELLO_TIMEOUT_NANOS}) is closed with a
 * log line, and the listener carries on.
 */
final class TcpListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TcpListener.class.getName());
    static final byte HELLO = 1;
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
        ch.register(selector, SelectionKey.OP_READ, new Pending());
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
            String problem = check(p.body);
            if (problem != null) {
                reject(key, problem);
                return;
            }
            int rank = p.body.getInt();
            key.cancel();
            if (!admission.admit(rank, ch)) {
                LOG.log(System.Logger.Level.WARNING, ctx + ": closed connection from " + remote(ch) + ": second hello from rank " + rank);
                ch.close();
            }
        } catch (IOException e) {
            reject(key, e.toString());
        }
    }

    /** Null when the hello is for this job and group from a rank that should dial us, else what is wrong. */
    private String check(ByteBuffer f) {
        if (f.remaining() < 1 + 4 || f.get() != HELLO) {
            return "first frame is not a hello";
        }
        int tokenLen = f.getInt();
        if (tokenLen < 0 || tokenLen > f.remaining()) {
            return "malformed hello";
        }
        byte[] token = new byte[tokenLen];
        f.get(token);
        if (!MessageDigest.isEqual(token, ctx.jobToken())) {
            return "wrong job token (not a member of job '" + ctx.jobId() + "')";
        }
        if (f.remaining() < 4) {
            return "malformed hello";
        }
        int nameLen = f.getInt();
        if (nameLen < 0 || nameLen + 4 != f.remaining()) {
            return "malformed hello";
        }
        byte[] name = new byte[nameLen];
        f.get(name);
        String group = new String(name, StandardCharsets.UTF_8);
        if (!group.equals(ctx.name())) {
            return "hello for group '" + group + "' on the port of group '" + ctx.name() + "'";
        }
        int rank = f.getInt(f.position());
        if (rank <= ctx.rank() || rank >= ctx.size()) {
            return "hello from rank " + rank + ", expected one of " + (ctx.rank() + 1) + ".." + (ctx.size() - 1);
        }
        if (connected.test(rank)) {
            return "second hello from rank " + rank;
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
        LOG.log(System.Logger.Level.WARNING, ctx + ": closed connection from " + remote(ch) + ": " + why);
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

    /** The hello that {@code rank} sends on a connection it dialled, length prefix included. */
    static ByteBuffer hello(GroupContext ctx) {
        byte[] name = ctx.name().getBytes(StandardCharsets.UTF_8);
        byte[] token = ctx.jobToken();
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 4 + token.length + 4 + name.length + 4);
        b.putInt(1 + 4 + token.length + 4 + name.length + 4).put(HELLO).putInt(token.length).put(token)
                .putInt(name.length).put(name).putInt(ctx.rank());
        return b.flip();
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
