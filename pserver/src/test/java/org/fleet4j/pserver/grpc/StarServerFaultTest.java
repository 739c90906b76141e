package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** GrpcFaultTest's strangers and failures on a star_server or star_server_lite port. */
class StarServerFaultTest {
    private static final int DIM = Shards.DIM;

    @ParameterizedTest
    @ValueSource(strings = {"star_server", "star_server_lite"})
    void garbageOnThePortIsDroppedAndOthersAreServed(String protocol) throws Exception {
        PsTransport transport = PsTransport.forProtocol(protocol);
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (PsServer server = transport.serve(shard, options)) {
            byte[] garbage = new byte[64 * 1024];
            new Random(5).nextBytes(garbage);
            try (Socket s = GrpcFaultTest.connect(server.endpoint())) {
                s.setSoTimeout(30_000);
                try {
                    s.getOutputStream().write(garbage);
                } catch (IOException closedWhileWriting) {
                    // the server may drop the connection before all of it is written
                }
                assertEquals(-1, GrpcFaultTest.readUntilClosed(s.getInputStream()), "the server closed the connection");
            }
            try (PsConnection c = transport.connect(server.endpoint(), options)) {
                GrpcFaultTest.servesCorrectly(c, shard);
                pullsFused(c, shard);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"star_server", "star_server_lite"})
    void aWorkerWithAnotherJobsTokenIsRefusedAtConnect(String protocol) {
        PsTransport transport = PsTransport.forProtocol(protocol);
        PsOptions options = Shards.options(JobToken.random());
        TableShard shard = Shards.shard();
        try (PsServer server = transport.serve(shard, options)) {
            PsException e = assertThrows(PsException.class,
                    () -> transport.connect(server.endpoint(), Shards.options(JobToken.random())).close());
            assertEquals("parameter server " + server.endpoint() + " does not hold this job's token (its proof does not"
                    + " match): it belongs to another job, or was given a different FLEET_JOB_TOKEN", e.getMessage());
            try (PsConnection c = transport.connect(server.endpoint(), options)) {
                GrpcFaultTest.servesCorrectly(c, shard);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"star_server", "star_server_lite"})
    void aKilledServerProcessFailsTheNextPullWithinTheDeadlineNamingIt(String protocol) throws Exception {
        PsTransport transport = PsTransport.forProtocol(protocol);
        JobToken token = JobToken.random();
        // a long deadline, so a fresh server JVM on a loaded machine answers Hello in time; a dead one fails at once
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(30), token);
        try (ServerProcess process = ServerProcess.start(token, protocol)) {
            try (PsConnection c = transport.connect(process.endpoint(), options)) {
                MemorySegment rows = Shards.floats(DIM);
                PsBatch pull = new PsBatch(List.of(), List.of(new PsBatch.Sparse("emb", Shards.ids(1), 1, rows)));
                c.pullMany(pull);
                c.pushMany(new PsBatch(List.of(), List.of(new PsBatch.Sparse("emb", Shards.ids(1), 1, rows))));
                process.kill();
                long start = System.nanoTime();
                PsException e = assertThrows(PsException.class, () -> c.pullMany(pull));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 5_000, "failed after " + ms + " ms");
                // a dead server shows either as the call's own failure or as the closed channel; both name it
                String where = " on parameter server " + process.endpoint();
                assertTrue(e.getMessage().contains(where + ": ") || e.getMessage().contains(where + " failed: "),
                        e.getMessage());
                System.out.println(protocol + " after kill -9: " + e.getMessage() + " (" + ms + " ms)");
            }
        }
    }

    /** A fused pull equals the table's own rows. */
    private static void pullsFused(PsConnection c, TableShard served) {
        MemorySegment ids = Shards.ids(7, 8, 1L << 41);
        MemorySegment rows = Shards.floats(3L * DIM);
        c.pullMany(new PsBatch(List.of(), List.of(new PsBatch.Sparse("emb", ids, 3, rows))));
        assertArrayEquals(Shards.pullSparse(served, "emb", ids, 3, DIM), rows.toArray(ValueLayout.JAVA_FLOAT));
    }
}
