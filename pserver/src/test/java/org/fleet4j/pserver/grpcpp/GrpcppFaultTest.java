package org.fleet4j.pserver.grpcpp;

import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.grpc.LogLines;
import org.fleet4j.pserver.grpc.ServerProcess;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Strangers and failures on a grpc++ data port; after each the server still serves a worker correctly. */
class GrpcppFaultTest {
    private static final int DIM = Shards.DIM;
    private static final NetworkSettings TWO_THREADS = new NetworkSettings(2, false, false);

    private LogLines logged;

    @BeforeEach
    void captureLog() {
        logged = new LogLines(DataServer.class);
    }

    @AfterEach
    void releaseLog() {
        logged.close();
    }

    @Test
    void garbageIsDroppedWithALogLineAndOthersAreServed() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, TWO_THREADS)) {
            byte[] garbage = new byte[64 * 1024];
            new Random(5).nextBytes(garbage);
            try (RawFrames raw = new RawFrames(server.dataEndpoint())) {
                try {
                    raw.send(garbage);
                } catch (IOException closedWhileWriting) {
                    // the server may drop the connection before all of it is written
                }
                assertTrue(raw.closedByServer(), "the server closed the connection");
            }
            servesCorrectly(server, options, shard);
        }
        assertLogged("not a grpc++ frame (it starts with 0x");
    }

    @Test
    void aFrameClaiming2GbIsDroppedWithNothingAllocatedForIt() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, TWO_THREADS);
             RawFrames raw = new RawFrames(server.dataEndpoint())) {
            raw.hello(0);
            long before = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            ByteBuffer header = ByteBuffer.allocate(Frames.LENGTH_BYTES + Frames.REQUEST_HEADER);
            header.putInt((int) (2L << 30)).putInt(Frames.MAGIC).put(Frames.VERSION)
                    .put((byte) Frames.Call.PUSH_SPARSE.ordinal()).putShort((short) 0)
                    .put(new byte[CallProof.HEADER_BYTES]);
            raw.send(header.array());
            raw.send(new byte[64 * 1024]);
            assertTrue(raw.closedByServer(), "the server closed the connection");
            long grown = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - before;
            assertTrue(grown < (16 << 20), "direct memory grew by " + grown + " bytes for a 2 GB claim");
            servesCorrectly(server, options, shard);
        }
        assertLogged("a frame claims 2147483648 bytes, outside [80, 1073741824] (nothing was allocated for it)");
    }

    @Test
    void aWrongTokenIsRefusedOnTheHeaderBeforeItsBodyIsReadOrATableTouched() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = Shards.options(token);
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, new NetworkSettings(1, false, false))) {
            byte[] body = RawFrames.sparseBody("wide", new long[]{7}, new float[]{1f});
            try (RawFrames raw = new RawFrames(server.dataEndpoint())) {
                byte[] session = raw.hello(0);
                RawFrames.Reply r = raw.call(Frames.Call.PUSH_SPARSE, CallProof.header(JobToken.random(), session, 0,
                        Frames.Call.PUSH_SPARSE.method), body);
                assertEquals(Frames.REFUSED, r.status());
                assertTrue(r.text().contains("its proof was not made with this job's token"), r.text());
                assertTrue(raw.closedByServer(), "the server closed the connection");
            }
            try (RawFrames raw = new RawFrames(server.dataEndpoint())) {
                byte[] session = raw.hello(0);
                byte[] good = CallProof.header(token, session, 3, Frames.Call.PUSH_SPARSE.method);
                assertEquals(Frames.OK, raw.call(Frames.Call.PUSH_SPARSE, good, body).status(), "a good proof");
                RawFrames.Reply replay = raw.call(Frames.Call.PUSH_SPARSE, good, body);
                assertEquals(Frames.REFUSED, replay.status());
                assertTrue(replay.text().contains("call 3 of its session was seen before"), replay.text());
            }
            try (RawFrames raw = new RawFrames(server.dataEndpoint())) {
                raw.hello(0);
                long before = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
                ByteBuffer header = ByteBuffer.allocate(Frames.LENGTH_BYTES + Frames.REQUEST_HEADER);
                header.putInt((int) Frames.MAX_FRAME).putInt(Frames.MAGIC).put(Frames.VERSION)
                        .put((byte) Frames.Call.PUSH_SPARSE.ordinal()).putShort((short) 0)
                        .put(new byte[CallProof.HEADER_BYTES]);
                raw.send(header.array());
                assertEquals(Frames.REFUSED, raw.reply().status(), "a 1 GiB claim without a proof");
                long grown = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - before;
                assertTrue(grown < (16 << 20), "direct memory grew by " + grown + " bytes for a stranger's 1 GiB");
            }
            float[] row = pullSparse(shard, "wide", Shards.ids(7), 1, 1);
            assertEquals(-1f, row[0], "only the push with a good proof was applied, once");
            servesCorrectly(server, options, shard);
        }
        assertLogged("refused PUSH_SPARSE: its proof was not made with this job's token");
    }

    @Test
    void aTruncatedFrameIsDroppedWithALogLineAndTouchesNoTable() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = Shards.options(token);
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, new NetworkSettings(1, false, false))) {
            try (RawFrames raw = new RawFrames(server.dataEndpoint())) {
                byte[] session = raw.hello(0);
                byte[] whole = RawFrames.frame(Frames.Call.PUSH_SPARSE, CallProof.header(token, session, 0,
                        Frames.Call.PUSH_SPARSE.method), RawFrames.sparseBody("wide", new long[]{1, 2, 3},
                        new float[]{1, 2, 3}));
                raw.send(Arrays.copyOf(whole, whole.length - 5));
            }
            assertEquals(0, shard.sparseTable("wide").keys(), "the truncated push reached no table");
            servesCorrectly(server, options, shard);
        }
        assertLogged("a truncated frame: the connection closed after ");
    }

    @Test
    void anIdSentToAThreadThatDoesNotOwnItIsRefused() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = Shards.options(token);
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, TWO_THREADS);
             RawFrames raw = new RawFrames(server.dataEndpoint())) {
            long id = 0;
            while (KeyHash.threadOf(id, 2) != 1) {
                id++;
            }
            byte[] session = raw.hello(0);
            RawFrames.Reply r = raw.call(Frames.Call.PULL_SPARSE, CallProof.header(token, session, 0,
                    Frames.Call.PULL_SPARSE.method), RawFrames.sparseBody("emb", new long[]{id}, new float[0]));
            assertEquals(Frames.BAD_REQUEST, r.status());
            assertEquals("sparse table emb: id " + id + " belongs to network thread 1 of 2, and came to thread 0;"
                    + " route ids with KeyHash.threadOf", r.text());
            assertEquals(0, shard.sparseTable("emb").keys(), "thread 0 created no row of thread 1's");
        }
    }

    @Test
    void aMappedPortNobodyListensOnIsNamed() throws Exception {
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofMillis(1500), JobToken.random());
        int nobody = FreePorts.one();
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, TWO_THREADS)) {
            GrpcppTransport worker = new GrpcppTransport(EndpointMap.parse(List.of(server.endpoint() + "=127.0.0.1:"
                    + nobody), ".endpoint_map"), null, TWO_THREADS);
            PsException e = assertThrows(PsException.class, () -> worker.connect(server.endpoint(), options).close());
            assertTrue(e.getMessage().startsWith("parameter server " + server.endpoint() + " (grpc++ data port"
                    + " 127.0.0.1:" + nobody + ", thread 0): nobody listens on the grpc++ data port 127.0.0.1:"
                    + nobody), e.getMessage());
            GrpcppTransport unmapped = new GrpcppTransport(EndpointMap.empty(), null, TWO_THREADS);
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> unmapped.connect(server.endpoint(), options));
            assertTrue(none.getMessage().startsWith("no grpc++ data port is known for parameter server "
                    + server.endpoint()), none.getMessage());
        }
    }

    @ParameterizedTest(name = "worker network threads: {0}")
    @ValueSource(ints = {2, 0})
    void aKilledServerProcessFailsTheNextCallWithinTheDeadlineNamingIt(int workerThreads) throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(5), token);
        int dataPort = FreePorts.one();
        String data = "127.0.0.1:" + dataPort;
        try (ServerProcess process = ServerProcess.start(token, GrpcppTransport.PROTOCOL,
                Map.of(EndpointMap.ENV, "127.0.0.1:0=" + data, "NETWORK_PS_CORE_NUMBER", "2"))) {
            GrpcppTransport worker = new GrpcppTransport(EndpointMap.parse(List.of(process.endpoint() + "=" + data),
                    "test"), null, new NetworkSettings(workerThreads, false, false));
            try (PsConnection c = worker.connect(process.endpoint(), options)) {
                assertEquals(2, ((GrpcppConnection) c).threads(), "NETWORK_PS_CORE_NUMBER=2 on the server");
                long[] spread = {1, 2, 3, 4, 5, 6, 7, 8};
                assertEquals(spread.length * DIM, pullSparse(c, "emb", Shards.ids(spread), spread.length, DIM).length);
                process.kill();
                long start = System.nanoTime();
                PsException e = assertThrows(PsException.class, () -> pullSparse(c, "emb", Shards.ids(spread),
                        spread.length, DIM));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < options.deadline().toMillis(), "failed after " + ms + " ms");
                assertTrue(e.getMessage().startsWith("pullSparse(emb, 8 ids) on parameter server " + process.endpoint()
                        + " (grpc++ data port " + data), e.getMessage());
                System.out.println("after kill -9: " + e.getMessage() + " (" + ms + " ms)");
            }
        }
    }

    @Test
    void garbageOnTheControlPortIsDroppedWithALogLineAndTheServerServesOn() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (LogLines control = new LogLines(Class.forName("org.fleet4j.pserver.grpc.GrpcPsServer"));
             GrpcppServer server = Loopback.serve(shard, options, TWO_THREADS)) {
            byte[] garbage = new byte[64 * 1024];
            new Random(5).nextBytes(garbage);
            InetSocketAddress a = TcpStore.parseHostPort(server.endpoint(), "control endpoint");
            try (Socket s = new Socket(a.getHostString(), a.getPort())) {
                s.setSoTimeout(30_000);
                try {
                    s.getOutputStream().write(garbage);
                } catch (IOException closedWhileWriting) {
                    // the server may drop the connection before all of it is written
                }
                assertTrue(closedByPeer(s.getInputStream()), "the server closed the control connection");
            }
            servesCorrectly(server, options, shard);
            assertTrue(control.messages().stream().anyMatch(m -> m.startsWith("parameter server: dropped a connection"
                    + " that does not speak gRPC")), "logged " + control.messages());
        }
    }

    @Test
    void aWrongTokenOnTheControlPortIsRefusedAtConnectAndTheServerServesOn() {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (GrpcppServer server = Loopback.serve(shard, options, TWO_THREADS)) {
            PsException control = assertThrows(PsException.class, () -> GrpcTransport.connectControl(
                    GrpcppTransport.PROTOCOL, server.endpoint(), Shards.options(JobToken.random())).calls().close());
            assertEquals("parameter server " + server.endpoint() + " does not hold this job's token (its proof does not"
                    + " match): it belongs to another job, or was given a different FLEET_JOB_TOKEN",
                    control.getMessage());
            PsException worker = assertThrows(PsException.class,
                    () -> Loopback.connect(server, Shards.options(JobToken.random())).close());
            assertEquals(control.getMessage(), worker.getMessage(), "a grpc++ worker is refused on the control port");
            PsException none = assertThrows(PsException.class,
                    () -> Loopback.connect(server, Shards.options(null)).close());
            assertTrue(none.getMessage().contains("requires the job token and this worker has none"), none.getMessage());
            assertEquals(0, shard.sparseTable("wide").keys());
            servesCorrectly(server, options, shard);
        }
    }

    @Test
    void aGrpcppWorkerAgainstAStarServerFailsAtConnectNamingBothWithOrWithoutAnEndpointMap() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        try (PsServer star = PsTransport.forProtocol("star_server").serve(Shards.shard(), options);
             ServerSocket data = new ServerSocket(0)) {
            String both = "speaks protocol 'star_server', the worker 'grpc++'";
            GrpcppTransport unmapped = new GrpcppTransport(EndpointMap.empty(), null, new NetworkSettings(1, false, false));
            PsException e = assertThrows(PsException.class, () -> unmapped.connect(star.endpoint(), options).close());
            assertTrue(e.getMessage().contains("parameter server " + star.endpoint() + " " + both), e.getMessage());
            GrpcppTransport mapped = new GrpcppTransport(EndpointMap.parse(List.of(star.endpoint() + "=127.0.0.1:"
                    + data.getLocalPort()), "test"), null, new NetworkSettings(1, false, false));
            PsException m = assertThrows(PsException.class, () -> mapped.connect(star.endpoint(), options).close());
            assertTrue(m.getMessage().contains("parameter server " + star.endpoint() + " " + both), m.getMessage());
        }
    }

    /** Reads until the peer closes: true then, or on the reset that a close with unread input becomes. */
    private static boolean closedByPeer(InputStream in) throws IOException {
        byte[] buf = new byte[4096];
        try {
            while (in.read(buf) >= 0) {
                // skip what the server says until it closes
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private void assertLogged(String part) {
        assertTrue(logged.messages().stream().anyMatch(m -> m.contains(part)), "logged " + logged.messages());
    }

    /** Pushes a gradient through a fresh worker and checks the rows against the same calls on a fresh shard. */
    private static void servesCorrectly(GrpcppServer server, PsOptions options, TableShard served) {
        TableShard expected = Shards.shard();
        long[] raw = {101, 102, 103, 104, 105, 106};
        MemorySegment ids = Shards.ids(raw);
        float[] before = pullSparse(served, "emb", ids, raw.length, DIM);
        MemorySegment grads = Shards.randomFloats(new Random(3), (long) raw.length * DIM);
        try (PsConnection c = Loopback.connect(server, options)) {
            assertArrayEquals(before, pullSparse(c, "emb", ids, raw.length, DIM));
            c.pushSparse("emb", ids, raw.length, grads);
            expected.pushSparse("emb", ids, raw.length, grads);
            assertArrayEquals(pullSparse(expected, "emb", ids, raw.length, DIM), pullSparse(c, "emb", ids,
                    raw.length, DIM));
        }
    }
}
