package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.CountingProxy;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * grpc++'s and star_server's wire bytes ({@code PsConnection.wireBytes}, what ps_perf reports): the connection's
 * count equals what a relay on the data port saw, and a fused pull or push of n unique ids of dimension 16 is exactly
 * one frame each way: its header, the entry's name and count, the ids, and the rows (within issue 14's 1.1 x payload).
 */
class GrpcppWireBytesTest {
    private static final int DIM = Shards.DIM;
    private static final int CALLS = 20;
    /** Length prefix and header of a request (with its proof) and of a reply. */
    private static final int REQUEST = Frames.LENGTH_BYTES + Frames.REQUEST_HEADER;
    private static final int REPLY = Frames.LENGTH_BYTES + Frames.REPLY_HEADER;
    /** A fused body's counts and the table's name and count: int32 dense, int32 sparse, "emb" (2 + 3), int32 n. */
    private static final int PULL_ENTRY = 4 + 4 + 5 + 4;

    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void theConnectionCountsWhatTheRelaySawAndAFusedStepIsOneFrameEachWay(int n) throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        MemorySegment ids = Shards.ids(new Random(n).longs(n * 2L, 0, 1L << 40).distinct().limit(n).toArray());
        MemorySegment rows = Shards.floats((long) n * DIM);
        PsBatch batch = new PsBatch(List.of(), List.of(new PsBatch.Sparse("emb", ids, n, rows)));
        // one network thread: one data connection, which the relay carries (it takes one connection)
        NetworkSettings one = new NetworkSettings(1, false, false);
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, one);
             CountingProxy relay = new CountingProxy(server.dataEndpoint());
             PsConnection c = new GrpcppTransport(EndpointMap.parse(List.of(server.endpoint() + "=" + relay.endpoint()),
                     "test"), null, one).connect(server.endpoint(), options)) {
            c.pullMany(batch);
            c.pushMany(batch);
            c.awaitPushes(); // a push returns once written (pushes pipeline); its reply is counted when it comes
            long relayed = relay.bytes();
            long counted = c.wireBytes();
            for (int i = 0; i < CALLS; i++) {
                c.pullMany(batch);
            }
            double perPull = (relay.bytes() - relayed) / (double) CALLS;
            assertEquals(perPull, (c.wireBytes() - counted) / (double) CALLS, 0.005 * perPull,
                    "the connection's wireBytes against the relay's count");
            long pull = REQUEST + PULL_ENTRY + 8L * n + REPLY + 4L * DIM * n;
            assertEquals(pull, perPull, 0.5, "one PULL_MANY frame and its reply");
            double payload = n * (8.0 + 4 * DIM);
            System.out.printf("grpc++ fused pull of %d unique ids, dim %d: %.0f wire bytes, payload %.0f (x%.4f)%n",
                    n, DIM, perPull, payload, perPull / payload);
            assertTrue(perPull <= 1.1 * payload, perPull + " bytes per pull > 1.1 x " + payload);

            relayed = relay.bytes();
            counted = c.wireBytes();
            for (int i = 0; i < CALLS; i++) {
                c.pushMany(batch);
            }
            c.awaitPushes();
            double perPush = (relay.bytes() - relayed) / (double) CALLS;
            assertEquals(perPush, (c.wireBytes() - counted) / (double) CALLS, 0.005 * perPush,
                    "the connection's wireBytes against the relay's count");
            // a push's entry also names the row dimension (int32); its reply is a bare header
            assertEquals(REQUEST + PULL_ENTRY + 4 + (8L + 4L * DIM) * n + REPLY, perPush, 0.5,
                    "one PUSH_MANY frame and its reply");
        }
    }

    /** star_server and star_server_lite count the same frames; lite's push goes out behind the next pull. */
    @ParameterizedTest
    @ValueSource(strings = {"star_server", "star_server_lite"})
    void starServerCountsOneFrameEachWayPerStep(String protocol) {
        int n = 1024;
        PsTransport transport = PsTransport.forProtocol(protocol);
        PsOptions options = Shards.options(JobToken.random());
        MemorySegment ids = Shards.ids(new Random(n).longs(n * 2L, 0, 1L << 40).distinct().limit(n).toArray());
        MemorySegment rows = Shards.floats((long) n * DIM);
        PsBatch batch = new PsBatch(List.of(), List.of(new PsBatch.Sparse("emb", ids, n, rows)));
        try (PsServer server = transport.serve(Shards.shard(), options);
             PsConnection c = transport.connect(server.endpoint(), options)) {
            c.pullMany(batch);
            c.pushMany(batch);
            c.pullMany(batch);
            long before = c.wireBytes();
            for (int i = 0; i < CALLS; i++) {
                c.pushMany(batch);
                c.pullMany(batch);
            }
            double perStep = (c.wireBytes() - before) / (double) CALLS;
            long pull = REQUEST + PULL_ENTRY + 8L * n + REPLY + 4L * DIM * n;
            long push = REQUEST + PULL_ENTRY + 4 + (8L + 4L * DIM) * n + REPLY;
            assertEquals(pull + push, perStep, 0.5, "a step: one PULL_MANY and one PUSH_MANY and their replies");
        }
    }

    @Test
    void grpcppCountsItsControlCallsToo() {
        PsOptions options = Shards.options(JobToken.random());
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(1, false, false));
             PsConnection c = Loopback.connect(server, options)) {
            long before = c.wireBytes();
            c.stats();
            assertTrue(c.wireBytes() > before, "Stats over the control port adds to the count");
        }
    }
}
