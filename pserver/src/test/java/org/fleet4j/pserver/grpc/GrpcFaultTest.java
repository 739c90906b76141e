package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Strangers and failures on a server's port; after each the server still serves a well-behaved worker correctly. */
class GrpcFaultTest {
    private static final int DIM = Shards.DIM;

    @Test
    void aSilentConnectionIsDroppedAndOthersAreServed() throws Exception {
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(2), JobToken.random());
        TableShard shard = Shards.shard();
        try (PsServer server = Shards.GRPC.serve(shard, options);
             Socket silent = connect(server.endpoint())) {
            long start = System.nanoTime();
            try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                servesCorrectly(c, shard);
            }
            silent.setSoTimeout(30_000);
            assertEquals(-1, readUntilClosed(silent.getInputStream()), "the server closed the silent connection");
            System.out.println("silent connection dropped after " + (System.nanoTime() - start) / 1_000_000 + " ms");
        }
    }

    @Test
    void garbageOnThePortIsDroppedAndOthersAreServed() throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        LogLines logged = new LogLines(GrpcPsServer.class);
        try (PsServer server = Shards.GRPC.serve(shard, options)) {
            byte[] garbage = new byte[64 * 1024];
            new Random(5).nextBytes(garbage);
            try (Socket s = connect(server.endpoint())) {
                s.setSoTimeout(30_000);
                try {
                    s.getOutputStream().write(garbage);
                } catch (IOException closedWhileWriting) {
                    // the server may drop the connection before all of it is written
                }
                assertEquals(-1, readUntilClosed(s.getInputStream()), "the server closed the connection");
            }
            try (Socket s = connect(server.endpoint())) {
                s.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().write(garbage, 0, 1000);
                s.setSoTimeout(30_000);
                assertEquals(-1, readUntilClosed(s.getInputStream()), "garbage after a good preface: closed too");
            }
            try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                servesCorrectly(c, shard);
            }
        } finally {
            logged.close();
        }
        assertEquals(List.of("parameter server: dropped a connection that does not speak gRPC: First received frame was"
                        + " not SETTINGS.", "parameter server: dropped a connection that does not speak gRPC: HTTP/2"
                        + " client preface string missing or corrupt."),
                logged.messages().stream().map(m -> m.substring(0, m.indexOf('.') + 1)).sorted().toList(),
                "one line per dropped connection, instead of grpc-java's stack trace");
    }

    @Test
    void aWorkerWithAnotherJobsTokenIsRefusedAtConnect() {
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (PsServer server = Shards.GRPC.serve(shard, options)) {
            PsException e = assertThrows(PsException.class,
                    () -> Shards.GRPC.connect(server.endpoint(), Shards.options(JobToken.random())).close());
            assertEquals("parameter server " + server.endpoint() + " does not hold this job's token (its proof does not"
                    + " match): it belongs to another job, or was given a different FLEET_JOB_TOKEN", e.getMessage());
            PsException none = assertThrows(PsException.class,
                    () -> Shards.GRPC.connect(server.endpoint(), Shards.options(null)).close());
            assertTrue(none.getMessage().contains("requires the job token and this worker has none"), none.getMessage());
            try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                servesCorrectly(c, shard);
            }
        }
    }

    @Test
    void callsWithoutAGoodProofAreRefusedBeforeTheyTouchATable() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = Shards.options(token);
        TableShard shard = Shards.shard();
        try (PsServer server = Shards.GRPC.serve(shard, options);
             RawClient raw = new RawClient(server.endpoint())) {
            byte[] session = raw.hello();
            String push = ParameterServerGrpc.getPushSparseMethod().getFullMethodName();
            PushSparseRequest request = PushSparseRequest.newBuilder().setTable("wide")
                    .setIds(ByteString.copyFrom(new byte[8])).setGrads(ByteString.copyFrom(new byte[4])).build();

            assertRefused(() -> raw.stub(null).pushSparse(request), "it carries no job-token proof");
            assertRefused(() -> raw.stub(CallProof.header(JobToken.random(), session, 0, push)).pushSparse(request),
                    "its proof was not made with this job's token");
            assertRefused(() -> raw.stub(CallProof.header(token, new byte[CallProof.SESSION_BYTES], 0, push))
                    .pushSparse(request), "its session was not opened by this server");
            assertRefused(() -> raw.stub(CallProof.header(token, session, 0,
                    ParameterServerGrpc.getSaveMethod().getFullMethodName())).pushSparse(request),
                    "its proof was not made with this job's token");
            assertRefused(() -> raw.stub(new byte[5]).pushSparse(request), "its job-token proof has 5 bytes, not 72");
            assertEquals(0, shard.sparseTable("wide").keys(), "no refused push reached the table");

            byte[] good = CallProof.header(token, session, 7, push);
            raw.stub(good).pushSparse(request);
            assertEquals(1, shard.sparseTable("wide").keys(), "a call with a good proof is served");
            assertRefused(() -> raw.stub(good).pushSparse(request), "call 7 of its session was seen before");

            try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
                servesCorrectly(c, shard);
            }
        }
    }

    private static void assertRefused(Executable call, String reason) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), e.toString());
        assertTrue(e.getStatus().getDescription().contains(reason), e.getStatus().getDescription());
    }

    @Test
    void aClosedServerFailsTheNextCallWithinTheDeadlineNamingIt() {
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(3), JobToken.random());
        PsServer server = Shards.GRPC.serve(Shards.shard(), options);
        try (PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM);
            server.close();
            long start = System.nanoTime();
            PsException e = assertThrows(PsException.class, () -> Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < options.deadline().toMillis(), "failed after " + ms + " ms");
            assertNamesTheServer(e, "pullSparse(emb, 1 ids) on parameter server " + server.endpoint());
        }
    }

    /**
     * The call and the server lead the message: "...: the server is unreachable (...)" when gRPC saw the connection
     * go, or "... failed: channel closed" when the call was in flight as it closed (which one is a race).
     */
    private static void assertNamesTheServer(PsException e, String where) {
        assertTrue(e.getMessage().startsWith(where + ": ") || e.getMessage().startsWith(where + " failed: "),
                e.getMessage());
    }

    @Test
    void aKilledServerProcessFailsTheNextCallWithinTheDeadlineNamingIt() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(5), token);
        try (ServerProcess process = ServerProcess.start(token)) {
            try (PsConnection c = Shards.GRPC.connect(process.endpoint(), options)) {
                assertEquals(DIM, Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM).length);
                process.kill();
                long start = System.nanoTime();
                PsException e = assertThrows(PsException.class, () -> Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < options.deadline().toMillis(), "failed after " + ms + " ms");
                assertNamesTheServer(e, "pullSparse(emb, 1 ids) on parameter server " + process.endpoint());
                System.out.println("after kill -9: " + e.getMessage() + " (" + ms + " ms)");
            }
        }
    }

    @Test
    void aHungServerFailsTheCallAtTheDeadlineNamingIt() throws Exception {
        JobToken token = JobToken.random();
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(2), token);
        try (ServerProcess process = ServerProcess.start(token)) {
            // a fresh server JVM on a loaded machine may take longer than the 2 s under test to answer its first call
            try (PsConnection warm = Shards.GRPC.connect(process.endpoint(),
                    new PsOptions("127.0.0.1:0", Duration.ofSeconds(30), token))) {
                assertEquals(DIM, Shards.pullSparse(warm, "emb", Shards.ids(1), 1, DIM).length);
            }
            try (PsConnection c = Shards.GRPC.connect(process.endpoint(), options)) {
                assertEquals(DIM, Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM).length);
                process.signal("STOP");
                long start = System.nanoTime();
                PsException e = assertThrows(PsException.class, () -> Shards.pullSparse(c, "emb", Shards.ids(1), 1, DIM));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms >= 1900 && ms < 10_000, "failed after " + ms + " ms");
                assertTrue(e.getMessage().startsWith("pullSparse(emb, 1 ids) on parameter server " + process.endpoint()
                        + ": no answer within 2000 ms"), e.getMessage());
            }
        }
    }

    @Test
    void aPortThatNeverAnswersFailsConnectAtTheDeadline() throws Exception {
        try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String endpoint = "127.0.0.1:" + blackHole.getLocalPort();
            PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofMillis(1500), JobToken.random());
            PsException e = assertThrows(PsException.class, () -> Shards.GRPC.connect(endpoint, options).close());
            assertTrue(e.getMessage().startsWith("connect on parameter server " + endpoint + ": no answer within 1500 ms"),
                    e.getMessage());
        }
    }

    static Socket connect(String endpoint) throws IOException {
        InetSocketAddress a = TcpStore.parseHostPort(endpoint, "endpoint");
        return new Socket(a.getHostString(), a.getPort());
    }

    /** Reads until the peer closes: -1 then, or the reset that a close with unread input becomes. */
    static int readUntilClosed(InputStream in) throws IOException {
        byte[] buf = new byte[4096];
        try {
            while (in.read(buf) >= 0) {
                // skip what the server says (its settings, a GOAWAY) until it closes
            }
            return -1;
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (IOException reset) {
            return -1;
        }
    }

    /** Pulls rows, pushes a gradient and pulls again, each checked against the same calls on a fresh shard. */
    static void servesCorrectly(PsConnection c, TableShard served) {
        TableShard expected = Shards.shard();
        long[] raw = new long[]{101, 102, 103};
        MemorySegment ids = Shards.ids(raw);
        MemorySegment out = Shards.floats(3 * DIM);
        expected.pullSparse("emb", ids, 3, out);
        float[] before = out.toArray(ValueLayout.JAVA_FLOAT);
        assertArrayEquals(before, Shards.pullSparse(c, "emb", ids, 3, DIM));
        MemorySegment grads = Shards.randomFloats(new Random(1), 3 * DIM);
        c.pushSparse("emb", ids, 3, grads);
        expected.pushSparse("emb", ids, 3, grads);
        assertArrayEquals(Shards.pullSparse(expected, "emb", ids, 3, DIM),
                Shards.pullSparse(c, "emb", ids, 3, DIM));
        assertArrayEquals(Shards.pullSparse(expected, "emb", ids, 3, DIM),
                Shards.pullSparse(served, "emb", ids, 3, DIM));
    }
}
