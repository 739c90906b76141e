package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.fleet4j.pserver.transport.PsException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A data connection without a network thread ({@code NETWORK_WORKER_CORE_NUMBER=0}) against a hand-made server on a
 * plain socket: replies cut anywhere and large ones read in place, a reply timed out half-way resumed by the next
 * wait, threads sharing the connection each getting their own reply, and the ways a server breaks a connection (a
 * reply nobody asked for, closing mid-reply, reading nothing), each failing every call waiting, naming why.
 */
class CallerDataChannelTest {
    private final ServerSocket listener;
    private final ExecutorService serverThread = Executors.newSingleThreadExecutor();
    private final CopyCount copies = new CopyCount();
    private final List<DataChannel> opened = new ArrayList<>();

    CallerDataChannelTest() throws IOException {
        listener = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void close() throws IOException {
        opened.forEach(DataChannel::close);
        serverThread.shutdownNow();
        listener.close();
    }

    /** The hand-made server's side of the one connection: requests read whole, replies written as the test says. */
    private record Peer(Socket socket, DataInputStream in, OutputStream out) {
        /** The next request's body (after its length and header). */
        byte[] request() throws IOException {
            int length = in.readInt();
            byte[] rest = new byte[length];
            in.readFully(rest);
            return Arrays.copyOfRange(rest, Frames.REQUEST_HEADER, length);
        }

        /** A reply's bytes: length, header (status OK unless said, {@code sequence}), {@code body}. */
        static byte[] reply(long sequence, short status, byte[] body) {
            ByteBuffer b = ByteBuffer.allocate(Frames.LENGTH_BYTES + Frames.REPLY_HEADER + body.length);
            b.putInt(Frames.REPLY_HEADER + body.length).putInt(Frames.MAGIC).put(Frames.VERSION)
                    .put((byte) Frames.Call.PULL_SPARSE.ordinal()).putShort(status).putLong(sequence).put(body);
            return b.array();
        }

        void write(byte[] bytes, int from, int to) throws IOException {
            out.write(bytes, from, to - from);
            out.flush();
        }
    }

    /** The connection under test and the hand-made server's end of it. */
    private DataChannel c;
    private Peer p;

    /** Opens {@link #c} with {@code deadline} for its waits, and takes the server's end as {@link #p}. */
    private void connect(Duration deadline) throws Exception {
        Future<Peer> accepted = accept();
        c = open(deadline);
        p = peer(accepted);
    }

    private Future<Peer> accept() {
        return serverThread.submit(() -> {
            Socket s = listener.accept();
            return new Peer(s, new DataInputStream(s.getInputStream()), s.getOutputStream());
        });
    }

    private Peer peer(Future<Peer> accepted) throws Exception {
        return accepted.get(30, TimeUnit.SECONDS);
    }

    private DataChannel open(Duration deadline) {
        DataChannel c = DataChannel.open("test server", null, false,
                (InetSocketAddress) listener.getLocalSocketAddress(), deadline, null, copies, new LongAdder());
        opened.add(c);
        return c;
    }

    /** Sends a request carrying {@code body}, which the server then reads. */
    private CompletableFuture<ByteBuf> sentAndRead(byte[] body) throws IOException {
        CompletableFuture<ByteBuf> reply = c.send(request(c, body));
        assertArrayEquals(body, p.request());
        return reply;
    }

    /** A request frame carrying {@code body} (no job token: every request's sequence is 0). */
    private static ByteBuf request(DataChannel c, byte[] body) {
        return Unpooled.wrappedBuffer(c.header(Frames.Call.PULL_SPARSE, body.length, 0), Unpooled.wrappedBuffer(body));
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), out);
        b.release();
        return out;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void repliesCutAnywhereArriveWholeInOrderAndALargeOneIsReadInPlace() throws Exception {
        connect(Duration.ofSeconds(30));
        byte[][] bodies = {random(10, 1), new byte[0], random(3 << 20, 2), random(70_000, 3), random(5, 4)};
        List<CompletableFuture<ByteBuf>> replies = new ArrayList<>();
        for (byte[] body : bodies) {
            replies.add(c.send(request(c, body)));
        }
        assertEquals(bodies.length, c.inFlight());
        ByteArrayBuilder all = new ByteArrayBuilder();
        for (byte[] body : bodies) {
            assertArrayEquals(body, p.request());
            all.add(Peer.reply(0, Frames.OK, body));
        }
        byte[] stream = all.bytes();
        // cut inside a length, inside a header, inside each body
        int[] cuts = {2, 9, 25, 40, 1_000_000, 3 << 20, (3 << 20) + 50_000, stream.length};
        int from = 0;
        for (int cut : cuts) {
            p.write(stream, from, cut);
            from = cut;
        }
        List<ByteBuf> got = c.awaitAll(replies, "five pulls", Duration.ofSeconds(30));
        for (int i = 0; i < bodies.length; i++) {
            assertArrayEquals(bodies[i], bytes(got.get(i)), "reply " + i);
        }
        assertEquals(0, c.inFlight());
        assertTrue(copies.readInPlaceBytes() > 0, "the 3 MiB body is read straight into its buffer");
        assertTrue(copies.reassembledBytes() < 200_000, "bytes copied into bodies from the read buffer: "
                + copies.reassembledBytes() + ", no more than came with their headers");
    }

    @Test
    void aReplyTimedOutHalfWayIsResumedByTheNextWait() throws Exception {
        connect(Duration.ofSeconds(30));
        byte[] first = random(100_000, 5);
        CompletableFuture<ByteBuf> late = sentAndRead(first);
        byte[] reply = Peer.reply(0, Frames.OK, first);
        p.write(reply, 0, 30_000);
        PsException e = assertThrows(PsException.class,
                () -> c.awaitAll(List.of(late), "pullSparse(emb, 1 ids)", Duration.ofMillis(300)));
        assertEquals("pullSparse(emb, 1 ids) on test server: no answer within 300 ms; is the server alive and"
                + " reachable?", e.getMessage());
        p.write(reply, 30_000, reply.length);
        byte[] second = random(20, 6);
        CompletableFuture<ByteBuf> next = c.send(request(c, second));
        assertArrayEquals(second, p.request());
        byte[] r2 = Peer.reply(0, Frames.OK, second);
        p.write(r2, 0, r2.length);
        assertArrayEquals(second, bytes(c.awaitAll(List.of(next), "the next call", Duration.ofSeconds(30)).getFirst()));
        // the late reply was completed on the way (and released: awaitAll gave it up when it timed out)
        assertTrue(late.isDone() && !late.isCompletedExceptionally(), "the late reply, completed on the way");
    }

    @Test
    void threadsSharingTheConnectionEachGetTheirOwnReplies() throws Exception {
        connect(Duration.ofSeconds(60));
        int threads = 4;
        int calls = 300;
        ExecutorService echo = Executors.newSingleThreadExecutor();
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        try {
            Future<?> echoing = echo.submit(() -> {
                for (int i = 0; i < threads * calls; i++) {
                    byte[] body = p.request();
                    byte[] r = Peer.reply(0, Frames.OK, body);
                    p.write(r, 0, r.length);
                }
                return null;
            });
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(callers.submit(() -> {
                    start.await();
                    for (int i = 0; i < calls; i++) {
                        byte[] body = random(1 + (i * 7919 + thread * 104_729) % 150_000, thread * 100_000L + i);
                        CompletableFuture<ByteBuf> r = c.send(request(c, body));
                        assertArrayEquals(body, bytes(c.awaitAll(List.of(r), "call " + i, Duration.ofSeconds(60))
                                .getFirst()), "thread " + thread + ", call " + i);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            echoing.get(30, TimeUnit.SECONDS);
        } finally {
            echo.shutdownNow();
            callers.shutdownNow();
        }
    }

    @Test
    void aWaitInterruptedInEpollEndsAtOnceAndTheConnectionServesOn() throws Exception {
        connect(Duration.ofSeconds(60));
        byte[] first = random(8, 10);
        CompletableFuture<ByteBuf> r = sentAndRead(first);
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try {
            Thread[] thread = new Thread[1];
            Future<PsException> waited = waiter.submit(() -> {
                thread[0] = Thread.currentThread();
                return assertThrows(PsException.class, () -> c.awaitAll(List.of(r), "pullSparse",
                        Duration.ofSeconds(60)));
            });
            // interrupt it once it waits in the connection's selector (not before: that path is the JDK's own)
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((thread[0] == null || Arrays.stream(thread[0].getStackTrace())
                    .noneMatch(f -> f.getMethodName().contains("select"))) && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            long start = System.nanoTime();
            thread[0].interrupt();
            assertEquals("pullSparse on test server: interrupted", waited.get(10, TimeUnit.SECONDS).getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "ended at once, not at the deadline");
        } finally {
            waiter.shutdownNow();
        }
        byte[] second = random(8, 11);
        CompletableFuture<ByteBuf> next = sentAndRead(second);
        for (byte[] body : List.of(first, second)) {
            byte[] reply = Peer.reply(0, Frames.OK, body);
            p.write(reply, 0, reply.length);
        }
        assertArrayEquals(second, bytes(c.awaitAll(List.of(next), "the next call", Duration.ofSeconds(30)).getFirst()));
    }

    @Test
    void aReplyNobodyAskedForBreaksTheConnectionNamingIt() throws Exception {
        connect(Duration.ofSeconds(30));
        CompletableFuture<ByteBuf> r = sentAndRead(random(8, 7));
        byte[] wrong = Peer.reply(7, Frames.OK, new byte[4]);
        p.write(wrong, 0, wrong.length);
        PsException e = assertThrows(PsException.class, () -> c.awaitAll(List.of(r), "pullSparse", Duration.ofSeconds(30)));
        assertEquals("pullSparse on test server failed: the server sent a reply nobody asked for (sequence 7)",
                e.getMessage());
        PsException after = assertThrows(PsException.class, () -> c.awaitAll(List.of(c.send(request(c, new byte[1]))),
                "the next call", Duration.ofSeconds(30)));
        assertTrue(after.getMessage().endsWith("a reply nobody asked for (sequence 7)"), after.getMessage());
    }

    @Test
    void theServerClosingMidReplyFailsEveryCallWaitingNamingIt() throws Exception {
        connect(Duration.ofSeconds(30));
        CompletableFuture<ByteBuf> a = sentAndRead(random(8, 8));
        CompletableFuture<ByteBuf> b = sentAndRead(random(8, 9));
        byte[] half = Peer.reply(0, Frames.OK, new byte[1000]);
        p.write(half, 0, 500);
        p.socket().close();
        PsException e = assertThrows(PsException.class, () -> c.awaitAll(List.of(a, b), "two pulls",
                Duration.ofSeconds(30)));
        assertEquals("two pulls on test server failed: the server closed the connection in the middle of a reply",
                e.getMessage());
        assertTrue(b.isCompletedExceptionally(), "the second call fails too");
        assertEquals(0, c.inFlight());
    }

    @Test
    void aServerThatReadsNothingTimesTheWriteOutNamingIt() throws Exception {
        connect(Duration.ofMillis(500));
        CompletableFuture<Void> written = new CompletableFuture<>();
        CompletableFuture<ByteBuf> r = c.send(request(c, new byte[64 << 20]), written);
        PsException e = assertThrows(PsException.class, () -> c.awaitWritten(written, "pushDense(w, block 0)",
                Duration.ofSeconds(30)));
        assertEquals("pushDense(w, block 0) on test server failed: the connection failed: a request was not written"
                + " within 500 ms (the socket took no more of it; is the server alive and reading?)", e.getMessage());
        assertTrue(r.isCompletedExceptionally());
    }

    /** Bytes appended in turn. */
    private static final class ByteArrayBuilder {
        private final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

        void add(byte[] b) {
            out.writeBytes(b);
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
