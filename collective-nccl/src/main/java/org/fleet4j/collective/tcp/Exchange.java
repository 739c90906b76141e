package org.fleet4j.collective.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.group.OpCall;
import org.fleet4j.collective.group.StallWarning;
import org.fleet4j.collective.reduce.Reductions;

/**
 * One operation's traffic with its two ring neighbours, driven by the thread that runs the operation: a list of
 * chunks to receive from one peer (copied straight into the user's buffer, or reduced into it from a staging
 * buffer) and a list of chunks to send to another (written straight from the user's buffer), where a send may
 * wait until a given number of receives are complete (a reduced chunk is forwarded as soon as it is reduced).
 * Sending and receiving are interleaved in one loop over non-blocking sockets, so both directions of every link
 * stay busy without any thread hand-off. Each chunk is a frame: a {@link TcpTransport#HEADER_BYTES} header
 * (type, payload length, call number and fingerprint) read and written together with the payload in one
 * scattering or gathering system call.
 */
final class Exchange {
    /**
     * How long to retry sockets that made no progress, yielding the core between tries, before sleeping in the
     * selector: a peer in step answers sooner than a wake-up from epoll, and yielding lets a peer that shares this
     * core (on a busy host) run instead of waiting for the end of this thread's time slice.
     */
    private static final long SPIN_NANOS = 200_000;
    /** Fewest arrived bytes of a chunk worth reducing before the rest of it is in. */
    private static final int REDUCE_STEP_BYTES = 32 << 10;

    private final TcpTransport transport;
    private final OpCall call;
    private final int from;
    private final int to;
    private final long deadline;
    private final StallWarning stall;
    private final long fingerprintHigh;
    private final long fingerprintLow;

    private MemorySegment[] sendSeg = new MemorySegment[8];
    private long[] sendOff = new long[8];
    private int[] sendLen = new int[8];
    private int[] sendAfter = new int[8];
    private int sends;
    private MemorySegment[] recvSeg = new MemorySegment[8];
    private long[] recvOff = new long[8];
    private int[] recvLen = new int[8];
    /** 0: copy; 1: reduce; k > 1: reduce, then divide by k (the last step of an average). */
    private int[] recvReduce = new int[8];
    private int receives;

    private int sent;
    private int received;
    private boolean sending;
    private boolean receiving;
    private boolean headerChecked;
    /** Bytes of the chunk being received that are already reduced into the user's buffer. */
    private int reducedBytes;
    private final ByteBuffer[] out = new ByteBuffer[2];
    private final ByteBuffer[] in = new ByteBuffer[2];

    /**
     * {@code from} and {@code to} are ranks, equal for two ranks, or -1 where there is nothing to receive or send;
     * {@code stall} warns when the operation waits long for them.
     */
    Exchange(TcpTransport transport, OpCall call, int from, int to, long deadline, StallWarning stall) {
        this.transport = transport;
        this.call = call;
        this.from = from;
        this.to = to;
        this.deadline = deadline;
        this.stall = stall;
        this.fingerprintHigh = call.fingerprintHigh();
        this.fingerprintLow = call.fingerprintLow();
        out[0] = transport.sendHeader;
        in[0] = transport.receiveHeader;
    }

    /** How many receives have been queued so far. */
    int receiveCount() {
        return receives;
    }

    /**
     * Queues {@code bytes} of {@code seg} at {@code offset} to send once {@code afterReceives} receives are
     * complete; sends go out in the order they were queued.
     */
    void send(MemorySegment seg, long offset, int bytes, int afterReceives) {
        if (sends == sendSeg.length) {
            int n = sends * 2;
            sendSeg = Arrays.copyOf(sendSeg, n);
            sendOff = Arrays.copyOf(sendOff, n);
            sendLen = Arrays.copyOf(sendLen, n);
            sendAfter = Arrays.copyOf(sendAfter, n);
        }
        sendSeg[sends] = seg;
        sendOff[sends] = offset;
        sendLen[sends] = bytes;
        sendAfter[sends] = afterReceives;
        sends++;
    }

    /** Queues a chunk to copy into {@code seg}; returns the number of receives that are complete once it is. */
    int receiveCopy(MemorySegment seg, long offset, int bytes) {
        return receive(seg, offset, bytes, 0);
    }

    /**
     * Queues a chunk to reduce into {@code seg} with the call's op, then divide by {@code divideBy} unless that is
     * 1; returns the number of receives that are complete once it is.
     */
    int receiveReduce(MemorySegment seg, long offset, int bytes, int divideBy) {
        if (bytes > transport.staging.capacity()) {
            throw new IllegalArgumentException("chunk of " + bytes + " bytes exceeds the staging buffer of "
                    + transport.staging.capacity());
        }
        return receive(seg, offset, bytes, Math.max(1, divideBy));
    }

    private int receive(MemorySegment seg, long offset, int bytes, int reduce) {
        if (receives == recvSeg.length) {
            int n = receives * 2;
            recvSeg = Arrays.copyOf(recvSeg, n);
            recvOff = Arrays.copyOf(recvOff, n);
            recvLen = Arrays.copyOf(recvLen, n);
            recvReduce = Arrays.copyOf(recvReduce, n);
        }
        recvSeg[receives] = seg;
        recvOff[receives] = offset;
        recvLen[receives] = bytes;
        recvReduce[receives] = reduce;
        return ++receives;
    }

    /** Moves every queued chunk; fails naming the peer on timeout, disconnect, abort or a mismatched call. */
    void run() {
        transport.checkAborted();
        long spinUntil = 0;
        try {
            while (sent < sends || received < receives) {
                boolean moved = pumpSend();
                moved |= pumpReceive();
                if (moved) {
                    spinUntil = 0;
                    continue;
                }
                long now = System.nanoTime();
                if (spinUntil == 0) {
                    spinUntil = now + SPIN_NANOS;
                }
                if (now - spinUntil < 0) {
                    Thread.yield();
                    continue;
                }
                block(now);
                spinUntil = 0;
            }
        } finally {
            // a frame cut short must be completed before anything else can be written on that connection
            if (sending) {
                transport.frameCutShort(to, out[0].remaining() + (long) out[1].remaining());
            }
        }
    }

    private boolean pumpSend() {
        boolean moved = false;
        while (true) {
            if (!sending) {
                if (sent == sends || received < sendAfter[sent]) {
                    return moved;
                }
                int len = sendLen[sent];
                out[0].clear();
                out[0].putInt(TcpTransport.DATA).putInt(len).putLong(call.seq()).putLong(fingerprintHigh)
                        .putLong(fingerprintLow).flip();
                out[1] = sendSeg[sent].asSlice(sendOff[sent], len).asByteBuffer();
                sending = true;
            }
            long n;
            try {
                n = transport.channel(to).write(out);
            } catch (IOException e) {
                throw transport.lost(call, to, "dropped its connection (" + e.getMessage() + ")");
            }
            if (n > 0) {
                moved = true;
            }
            if (out[1].hasRemaining() || out[0].hasRemaining()) {
                return moved;
            }
            sending = false;
            sent++;
        }
    }

    private boolean pumpReceive() {
        boolean moved = false;
        SocketChannel ch = received < receives ? transport.channel(from) : null;
        while (received < receives) {
            int i = received;
            if (!receiving) {
                in[0].clear();
                in[1] = recvReduce[i] == 0 ? recvSeg[i].asSlice(recvOff[i], recvLen[i]).asByteBuffer()
                        : transport.staging.clear().limit(recvLen[i]);
                receiving = true;
                headerChecked = false;
                reducedBytes = 0;
            }
            long n;
            try {
                n = ch.read(in);
            } catch (IOException e) {
                throw transport.lost(call, from, "dropped its connection (" + e.getMessage() + ")");
            }
            if (n < 0) {
                throw transport.lost(call, from, "dropped its connection (process died or was killed?)");
            }
            if (n > 0) {
                moved = true;
            }
            if (!headerChecked && !in[0].hasRemaining()) {
                checkHeader(ch, recvLen[i]);
                headerChecked = true;
            }
            boolean complete = !in[0].hasRemaining() && !in[1].hasRemaining();
            if (recvReduce[i] > 0 && headerChecked) {
                reduceArrived(i, complete);
            }
            if (!complete) {
                return moved;
            }
            receiving = false;
            received++;
        }
        return moved;
    }

    /**
     * Reduces the whole elements of receive {@code i} that have arrived in the staging buffer since the last call,
     * once there are {@link #REDUCE_STEP_BYTES} of them or the chunk is complete: the bytes are reduced while they
     * are still in cache, and a complete chunk has only its tail left to reduce before it can be forwarded.
     */
    private void reduceArrived(int i, boolean complete) {
        int es = call.dtype().byteSize();
        int upTo = complete ? recvLen[i] : transport.staging.position() / es * es;
        if (upTo - reducedBytes < (complete ? 1 : REDUCE_STEP_BYTES)) {
            return;
        }
        long elems = (upTo - reducedBytes) / es;
        Reductions.combine(recvSeg[i], recvOff[i] + reducedBytes, transport.stagingSegment, reducedBytes, elems,
                call.dtype(), call.op());
        if (recvReduce[i] > 1) {
            Reductions.divide(recvSeg[i], recvOff[i] + reducedBytes, elems, call.dtype(), recvReduce[i]);
        }
        reducedBytes = upTo;
    }

    private void checkHeader(SocketChannel ch, int expected) {
        ByteBuffer h = in[0];
        int type = h.getInt(0);
        int len = h.getInt(4);
        if (type == TcpTransport.ABORT) {
            throw transport.lost(call, from, "aborted the group after: " + transport.readAbortReason(ch, in[1], len));
        }
        if (type == TcpTransport.BYE) {
            throw transport.lost(call, from, "closed the group");
        }
        if (type != TcpTransport.DATA) {
            throw new CollectiveException(call + " on " + transport.context() + ": rank " + from
                    + " sent a frame of unknown type " + type + " (a corrupted stream?)");
        }
        long seq = h.getLong(8);
        long high = h.getLong(16);
        long low = h.getLong(24);
        if (transport.context().options().verifyCalls() && (seq != call.seq() || !call.matches(high, low))) {
            throw new CollectiveException("mismatched calls on " + transport.context() + ": this rank issued " + call
                    + " but rank " + from + " issued " + OpCall.describe(high, low, seq)
                    + "; every rank must issue the same calls in the same order");
        }
        if (len != expected) {
            throw new CollectiveException(call + " on " + transport.context() + ": rank " + from + " sent a chunk of "
                    + len + " bytes where " + expected + " were expected (do all ranks use the same tcpChunkBytes?)");
        }
    }

    /** Sleeps in the selector until a socket this exchange waits on is ready, or fails at the deadline. */
    private void block(long now) {
        boolean wantRead = received < receives;
        boolean wantWrite = sending;
        if (now - deadline >= 0) {
            long ms = transport.context().options().timeout().toMillis();
            if (wantRead) {
                throw new CollectiveException(call + " on " + transport.context() + " timed out after " + ms
                        + " ms waiting for data from rank " + from + ": ranks [" + from + "] did not take part");
            }
            throw new CollectiveException(call + " on " + transport.context() + " timed out after " + ms
                    + " ms sending to rank " + to + ", which stopped reading: ranks [" + to + "] did not take part");
        }
        stall.check(now, () -> wantRead ? "ranks [" + from + "] (waiting for their data)"
                : "ranks [" + to + "] (which stopped reading what this rank sends)");
        // wake for the warning if it comes before the deadline
        transport.awaitReady(wantRead ? from : -1, wantWrite ? to : -1, Math.min(deadline - now, Math.max(1,
                stall.nanosUntilDue(now))));
    }
}
