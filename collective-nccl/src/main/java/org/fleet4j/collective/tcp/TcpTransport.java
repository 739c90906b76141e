package org.fleet4j.collective.tcp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.OpCall;

/**
 * A full mesh of authenticated TCP connections among a group's ranks. Rank i dials every rank below it and says
 * hello with the group name, its rank and a proof of the job token over the listener's nonce; the
 * {@link TcpListener} checks all three (and proves the token back) before the connection carries data and closes
 * anything else with a log line. Once connected, every socket is non-blocking
 * and belongs to whichever thread runs the group's current operation ({@link Exchange}): there is no event-loop
 * thread on the data path, so a chunk costs no thread hand-off and is read and written straight from the user's
 * buffer.
 */
final class TcpTransport implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TcpTransport.class.getName());
    static final int DATA = 2;
    static final int BYE = 3;
    static final int ABORT = 4;
    /** type, payload bytes (ints), call number, fingerprint (two words). */
    static final int HEADER_BYTES = 4 + 4 + 8 + 8 + 8;
    /** Kernel socket buffers that hold several chunks in flight in each direction. */
    static final int SOCKET_BUFFER_BYTES = 4 << 20;
    /**
     * Congestion control for connections to ranks on this host. bbr (this machine's default) makes TCP pace its own
     * sends where no fq qdisc does, and on loopback pacing only holds data back; reno, which every process may
     * choose, sends as fast as the window allows (docs/performance/collectives.md, "The tcp data path").
     */
    static final String LOCAL_CONGESTION_CONTROL = "reno";
    /** How long an abort or goodbye may wait to get its last frame out before the connection is simply closed. */
    private static final long LAST_WORDS_NANOS = 1_000_000_000L;
    /** An abort reason longer than this is cut; it only has to name what went wrong. */
    private static final int MAX_REASON_BYTES = 16 << 10;

    private final GroupContext ctx;
    private final SocketChannel[] peers;
    private final TcpListener listener;
    private final Selector selector;
    private final SelectionKey[] keys;
    /** Bytes still owed of a data frame that an operation left half-written, per peer. */
    private final long[] owed;
    final ByteBuffer sendHeader = ByteBuffer.allocateDirect(HEADER_BYTES);
    final ByteBuffer receiveHeader = ByteBuffer.allocateDirect(HEADER_BYTES);
    /** Where a chunk to be reduced lands before it is combined into the user's buffer. */
    final MemorySegment stagingSegment;
    final ByteBuffer staging;
    private final MemorySegment swapCopy;
    private volatile CollectiveException aborted;
    private volatile boolean closed;

    TcpTransport(GroupContext ctx) {
        this.ctx = ctx;
        int n = ctx.size();
        this.peers = new SocketChannel[n];
        this.keys = new SelectionKey[n];
        this.owed = new long[n];
        this.stagingSegment = Arena.ofAuto().allocate(ctx.options().tcpChunkBytes(), 64);
        this.staging = stagingSegment.asByteBuffer();
        this.swapCopy = n == 2 ? Arena.ofAuto().allocate(TcpProcessGroup.SWAP_MAX_BYTES, 64) : null;
        Duration timeout = ctx.options().timeout();
        this.listener = new TcpListener(ctx, SOCKET_BUFFER_BYTES, this::admit, this::isConnected);
        try {
            selector = Selector.open();
            ctx.store().setString(ctx.key("tcp/" + ctx.rank()), ctx.bindHost() + ":" + listener.port());
            for (int j = 0; j < ctx.rank(); j++) {
                dial(j, ctx.store().getString(ctx.key("tcp/" + j), timeout));
            }
            awaitPeers(System.nanoTime() + timeout.toNanos());
            for (int j = 0; j < n; j++) {
                if (j != ctx.rank()) {
                    peers[j].setOption(StandardSocketOptions.TCP_NODELAY, true);
                    peers[j].setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
                    keys[j] = peers[j].register(selector, 0);
                    InetAddress peer = ((InetSocketAddress) peers[j].getRemoteAddress()).getAddress();
                    if (CongestionControl.isThisHost(peer) && !CongestionControl.set(peers[j], LOCAL_CONGESTION_CONTROL)) {
                        LOG.log(System.Logger.Level.DEBUG, ctx + ": the connection to rank " + j + " keeps its congestion"
                                + " control; " + LOCAL_CONGESTION_CONTROL + " could not be set");
                    }
                }
            }
        } catch (IOException e) {
            close();
            throw new CollectiveException("cannot set up the connections of " + ctx + ": " + e, e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    GroupContext context() {
        return ctx;
    }

    SocketChannel channel(int peer) {
        return peers[peer];
    }

    private void dial(int peer, String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        String host = endpoint.substring(0, colon);
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            // set before connecting so that the window scale is negotiated for it
            ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
            int timeoutMs = (int) Math.min(Integer.MAX_VALUE, ctx.options().timeout().toMillis());
            ch.socket().connect(new InetSocketAddress(host, port), timeoutMs);
            // the socket's own streams honour the timeout, so a listener that never answers cannot hang us
            ch.socket().setSoTimeout(timeoutMs);
            TcpListener.introduce(ch.socket().getInputStream(), ch.socket().getOutputStream(), ctx, peer);
            ch.socket().setSoTimeout(0);
            ch.configureBlocking(false);
        } catch (IOException e) {
            closeQuietly(ch);
            throw new CollectiveException(ctx + ": cannot connect to rank " + peer + " at " + endpoint + ": " + e, e);
        }
        admit(peer, ch);
    }

    private synchronized boolean admit(int peer, SocketChannel ch) {
        if (peers[peer] != null) {
            return false;
        }
        peers[peer] = ch;
        notifyAll();
        return true;
    }

    private synchronized boolean isConnected(int peer) {
        return peers[peer] != null;
    }

    private synchronized void awaitPeers(long deadline) {
        while (true) {
            List<Integer> missing = new ArrayList<>();
            for (int j = 0; j < peers.length; j++) {
                if (j != ctx.rank() && peers[j] == null) {
                    missing.add(j);
                }
            }
            long left = deadline - System.nanoTime();
            if (missing.isEmpty()) {
                return;
            }
            if (left <= 0) {
                throw new CollectiveException(ctx + ": ranks " + missing + " did not connect within "
                        + ctx.options().timeout().toMillis() + " ms");
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(ctx + ": interrupted while waiting for ranks " + missing + " to connect", e);
            }
        }
    }

    /** Sleeps until {@code reader}'s socket is readable or {@code writer}'s writable (-1: neither), at most {@code nanos}. */
    void awaitReady(int reader, int writer, long nanos) {
        for (int j = 0; j < keys.length; j++) {
            if (keys[j] != null) {
                int ops = (j == reader ? SelectionKey.OP_READ : 0) | (j == writer ? SelectionKey.OP_WRITE : 0);
                if (keys[j].interestOps() != ops) {
                    keys[j].interestOps(ops);
                }
            }
        }
        try {
            selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
            selector.selectedKeys().clear();
        } catch (IOException e) {
            throw new CollectiveException(ctx + ": waiting for ranks " + reader + "/" + writer + " failed: " + e, e);
        }
    }

    /** The error for an operation whose peer left: names the operation, the group and the peer. */
    CollectiveException lost(OpCall call, int peer, String what) {
        CollectiveException a = aborted;
        if (a != null) {
            return new CollectiveException(ctx + " was aborted: " + a.getMessage(), a);
        }
        if (closed) {
            return new CollectiveException(call + " on " + ctx + " failed: the group was closed while it ran");
        }
        return new CollectiveException(call + " on " + ctx + " failed: rank " + peer + " " + what
                + "; ranks [" + peer + "] did not take part");
    }

    void checkAborted() {
        CollectiveException a = aborted;
        if (a != null) {
            throw new CollectiveException(ctx + " was aborted: " + a.getMessage(), a);
        }
    }

    /** A copy of {@code buffer} (at most {@link TcpProcessGroup#SWAP_MAX_BYTES}) in memory owned by this transport. */
    MemorySegment swapCopy(MemorySegment buffer) {
        MemorySegment copy = swapCopy.asSlice(0, buffer.byteSize());
        copy.copyFrom(buffer);
        return copy;
    }

    /** Records that an operation stopped with {@code bytes} of a frame to {@code peer} unwritten. */
    void frameCutShort(int peer, long bytes) {
        owed[peer] = bytes;
    }

    /**
     * The reason text of an ABORT frame of {@code length} bytes, of which the first bytes may already have been read
     * into {@code alreadyRead} (its position says how many).
     */
    String readAbortReason(SocketChannel ch, ByteBuffer alreadyRead, int length) {
        int n = Math.max(0, Math.min(length, MAX_REASON_BYTES));
        ByteBuffer reason = ByteBuffer.allocate(n);
        ByteBuffer got = alreadyRead.duplicate().flip();
        got.limit(Math.min(got.limit(), n));
        reason.put(got);
        long deadline = System.nanoTime() + LAST_WORDS_NANOS;
        try {
            while (reason.hasRemaining() && System.nanoTime() - deadline < 0) {
                if (ch.read(reason) < 0) {
                    break;
                }
                Thread.onSpinWait();
            }
        } catch (IOException e) {
            // the peer closed right after its abort frame; what arrived is the reason
        }
        return new String(reason.array(), 0, reason.position(), StandardCharsets.UTF_8);
    }

    /**
     * Fails this group's later operations and tells every peer why before dropping the connections, so that peers
     * that wait for this rank fail fast with the original reason.
     */
    void abort(CollectiveException reason) {
        aborted = reason;
        byte[] msg = String.valueOf(reason.getMessage()).getBytes(StandardCharsets.UTF_8);
        int len = Math.min(msg.length, MAX_REASON_BYTES);
        for (int j = 0; j < peers.length; j++) {
            SocketChannel ch = peers[j];
            if (ch != null && ch.isOpen()) {
                ByteBuffer frame = ByteBuffer.allocate((int) owed[j] + HEADER_BYTES + len);
                frame.position((int) owed[j]); // zeros complete a half-written data frame
                frame.putInt(ABORT).putInt(len).putLong(0).putLong(0).putLong(0).put(msg, 0, len).flip();
                lastWords(j, frame);
            }
        }
    }

    /** Writes {@code frame} to {@code peer} if it goes out within {@link #LAST_WORDS_NANOS}, then closes the connection. */
    private void lastWords(int peer, ByteBuffer frame) {
        SocketChannel ch = peers[peer];
        long deadline = System.nanoTime() + LAST_WORDS_NANOS;
        try {
            while (frame.hasRemaining()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                if (ch.write(frame) == 0) {
                    awaitReady(-1, peer, left);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, ctx + ": last frame to rank " + peer + " not delivered: " + e);
        }
        closeQuietly(ch);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int j = 0; j < peers.length; j++) {
            SocketChannel ch = peers[j];
            if (ch != null && ch.isOpen()) {
                ByteBuffer bye = ByteBuffer.allocate(HEADER_BYTES).putInt(BYE).putInt(0).putLong(0).putLong(0).putLong(0).flip();
                if (owed[j] == 0) {
                    try {
                        ch.write(bye); // best effort: a peer that is not reading learns of the close from the EOF
                    } catch (IOException | RuntimeException e) {
                        LOG.log(System.Logger.Level.DEBUG, ctx + ": goodbye to rank " + j + " not delivered: " + e);
                    }
                }
                closeQuietly(ch);
            }
        }
        listener.close();
        if (selector != null) {
            try {
                selector.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, ctx + ": closing the selector failed: " + e);
            }
        }
    }

    private void closeQuietly(SocketChannel ch) {
        if (ch == null) {
            return;
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, ctx + ": closing a connection failed: " + e);
        }
    }
}
