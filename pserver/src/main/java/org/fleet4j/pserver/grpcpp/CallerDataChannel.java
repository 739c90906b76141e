package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.fleet4j.pserver.transport.PsException;

/**
 * A data connection without a network thread ({@code NETWORK_WORKER_CORE_NUMBER=0}): the thread that sends a request
 * writes it to the socket itself, from the caller's memory, and the thread that awaits a reply reads it itself, in
 * place, completing on the way the replies of requests sent before it. A call then costs its system calls and no
 * hand-off between threads: with a network thread every call wakes that thread to write and is woken by it with the
 * reply. One thread writes at a time and one reads at a time (two locks), so several threads may share the
 * connection. The socket is non-blocking; a write that the socket cannot take at once, and a read with nothing to
 * read, wait in the connection's own selector for it (busy polling: spin, never sleep), at most until the call's
 * deadline. A read timed out mid-frame resumes where it stopped.
 */
final class CallerDataChannel extends DataChannel {
    /** The read buffer's size: replies up to this arrive in one read and are used where they lie. */
    private static final int READ_BYTES = 64 << 10;
    private static final int HEADER_BYTES = Frames.LENGTH_BYTES + Frames.REPLY_HEADER;

    private final SocketChannel socket;
    private final boolean busyPoll;
    private final Duration deadline;
    private final Selector readable;
    private final Selector writable;
    private final ReentrantLock writing = new ReentrantLock();
    private final ReentrantLock reading = new ReentrantLock();
    /** Requests written, oldest first: added under {@link #writing}, taken under {@link #reading}. */
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    // the reading side, under {@link #reading}
    private final KeptBuffer kept;
    private final ByteBuf header = PooledByteBufAllocator.DEFAULT.directBuffer(HEADER_BYTES, HEADER_BYTES);
    private ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer(READ_BYTES, READ_BYTES);
    /** The body being read, once its header is in {@link #header}; null between frames. */
    private ByteBuf body;
    private long bodyBytes = -1;
    private long copied;

    CallerDataChannel(String where, InetSocketAddress address, Duration deadline, boolean busyPoll, CopyCount copies,
                      LongAdder wireBytes) throws IOException {
        super(where, copies, wireBytes);
        this.busyPoll = busyPoll;
        this.deadline = deadline;
        this.kept = new KeptBuffer(copies);
        SocketChannel s = SocketChannel.open();
        try {
            s.setOption(StandardSocketOptions.TCP_NODELAY, true);
            InetSocketAddress resolved = address.isUnresolved()
                    ? new InetSocketAddress(address.getHostString(), address.getPort()) : address;
            s.socket().connect(resolved, (int) Math.min(Integer.MAX_VALUE, Math.max(1, deadline.toMillis())));
            s.configureBlocking(false);
            readable = Selector.open();
        } catch (IOException | RuntimeException e) {
            s.close();
            release();
            throw e;
        }
        try {
            writable = Selector.open();
            s.register(readable, SelectionKey.OP_READ);
            s.register(writable, SelectionKey.OP_WRITE);
        } catch (IOException | RuntimeException e) {
            s.close();
            readable.close();
            release();
            throw e;
        }
        socket = s;
    }

    @Override
    CompletableFuture<ByteBuf> send(ByteBuf frame, CompletableFuture<Void> written) {
        Reply done = new Reply(this);
        writing.lock();
        try {
            String closed = closedBecause;
            if (closed != null) {
                fail(done, written, closed);
                return done;
            }
            pending.add(new Pending(sequenceOf(frame), done));
            wireBytes.add(frame.readableBytes());
            writeAll(frame);
            if (written != null) {
                written.complete(null);
            }
        } catch (IOException | RuntimeException e) {
            // a frame cut short leaves the stream unusable: the connection ends, failing every request waiting
            closeBecause("the connection failed: " + e.getMessage());
        } finally {
            writing.unlock();
            frame.release();
        }
        if (written != null && !written.isDone()) {
            written.completeExceptionally(new PsException(closedBecause));
        }
        return done;
    }

    /**
     * Writes the whole frame; where the socket takes no more, waits for room (the server reads as it can), at most the
     * connection's deadline: a frame half written breaks the connection.
     */
    private void writeAll(ByteBuf frame) throws IOException {
        long end = System.nanoTime() + deadline.toNanos();
        ByteBuffer[] parts = frame.nioBuffers();
        long left = frame.readableBytes();
        int first = 0;
        while (left > 0) {
            long n = socket.write(parts, first, parts.length - first);
            left -= n;
            while (first < parts.length && !parts[first].hasRemaining()) {
                first++;
            }
            if (left > 0 && n == 0) {
                long wait = end - System.nanoTime();
                if (wait <= 0) {
                    throw new IOException("a request was not written within " + deadline.toMillis()
                            + " ms (the socket took no more of it; is the server alive and reading?)");
                }
                if (busyPoll) {
                    Thread.onSpinWait();
                } else {
                    writable.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
                    writable.selectedKeys().clear();
                }
                if (closedBecause != null) {
                    throw new IOException(closedBecause);
                }
            }
        }
    }

    /**
     * Reads replies until {@code reply} is complete or {@code end} (System.nanoTime) has passed, completing every
     * reply before it on the way; another thread reading meanwhile may complete it instead.
     */
    @Override
    void readUntil(Reply reply, long end) throws TimeoutException, InterruptedException {
        while (!reply.isDone()) {
            long left = end - System.nanoTime();
            if (left <= 0 || !reading.tryLock(left, TimeUnit.NANOSECONDS)) {
                throw new TimeoutException();
            }
            try {
                while (!reply.isDone()) {
                    if (!readFrame(end)) {
                        if (Thread.interrupted()) {
                            throw new InterruptedException();
                        }
                        throw new TimeoutException();
                    }
                }
            } finally {
                reading.unlock();
            }
        }
    }

    /** Reads one whole reply and hands it on; false when {@code end} passed first (resumed by the next call). */
    private boolean readFrame(long end) {
        try {
            while (bodyBytes < 0) {
                if (in.readableBytes() >= HEADER_BYTES) {
                    in.readBytes(header.clear(), HEADER_BYTES);
                    bodyBytes = replyBodyBytes(header);
                } else if (!fill(end)) {
                    return false;
                }
            }
            if (body == null) {
                if (in.readableBytes() >= bodyBytes) {
                    deliver(in.readRetainedSlice((int) bodyBytes));
                    return true;
                }
                body = kept.take(PooledByteBufAllocator.DEFAULT, (int) bodyBytes);
                copied = in.readableBytes();
                in.readBytes(body, in.readableBytes());
            }
            while (body.isWritable()) {
                int n = body.writeBytes(socket, body.writableBytes());
                if (n < 0) {
                    throw new ServerClosed("the server closed the connection in the middle of a reply");
                }
                copies.readInPlace(n);
                if (n == 0 && !await(end)) {
                    return false;
                }
            }
            ByteBuf whole = body;
            body = null;
            deliver(whole);
            return true;
        } catch (FrameException e) {
            closeBecause("the connection broke: " + e.getMessage());
            return true;
        } catch (ServerClosed e) {
            closeBecause(e.getMessage());
            return true;
        } catch (IOException e) {
            closeBecause("the connection failed: " + e.getMessage());
            return true;
        }
    }

    /** The server ended the connection (end of stream): its message is the reason as it stands. */
    private static final class ServerClosed extends IOException {
        ServerClosed(String why) {
            super(why);
        }
    }

    private void deliver(ByteBuf frameBody) {
        copies.received(bodyBytes, copied);
        bodyBytes = -1;
        copied = 0;
        try {
            answer(pending.poll(), header, frameBody);
        } finally {
            frameBody.release();
        }
    }

    /** More bytes into the read buffer (a fresh one when it is full); false when {@code end} passed first. */
    private boolean fill(long end) throws IOException {
        if (in.writableBytes() < HEADER_BYTES) {
            ByteBuf fresh = PooledByteBufAllocator.DEFAULT.directBuffer(READ_BYTES, READ_BYTES);
            fresh.writeBytes(in);
            in.release();
            in = fresh;
        }
        while (true) {
            int n = in.writeBytes(socket, in.writableBytes());
            if (n < 0) {
                throw new ServerClosed(bodyBytes >= 0 || in.isReadable()
                        ? "the server closed the connection in the middle of a reply"
                        : "the server closed the connection (is it alive?)");
            }
            if (n > 0) {
                return true;
            }
            if (!await(end)) {
                return false;
            }
        }
    }

    /**
     * Waits until the socket has bytes to read; false when {@code end} passed first or the thread was interrupted (a
     * selector does not wait for an interrupted thread), the read resumable either way.
     */
    private boolean await(long end) throws IOException {
        if (closedBecause != null) {
            throw new IOException(closedBecause);
        }
        long left = end - System.nanoTime();
        if (left <= 0 || Thread.currentThread().isInterrupted()) {
            return false;
        }
        if (busyPoll) {
            Thread.onSpinWait();
            return true;
        }
        readable.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        readable.selectedKeys().clear();
        return true;
    }

    @Override
    int inFlight() {
        return pending.size();
    }

    @Override
    void closeBecause(String why) {
        if (closedBecause == null) {
            closedBecause = why;
        }
        try {
            socket.close();
        } catch (IOException | RuntimeException e) {
            // closing: nothing more to do
        }
        for (Pending p = pending.poll(); p != null; p = pending.poll()) {
            p.reply().completeExceptionally(new PsException(closedBecause));
        }
    }

    @Override
    void close() {
        closeBecause("the connection was closed");
        readable.wakeup();
        writable.wakeup();
        reading.lock();
        try {
            release();
            closeQuietly(readable);
            closeQuietly(writable);
        } finally {
            reading.unlock();
        }
    }

    private void release() {
        if (header.refCnt() > 0) {
            header.release();
        }
        if (in.refCnt() > 0) {
            in.release();
        }
        if (body != null) {
            body.release();
            body = null;
        }
        kept.release();
    }

    private static void closeQuietly(Selector s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing: nothing more to do
        }
    }
}
