package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bytes on the wire (both ways, counted by a relay between worker and server) for a sparse pull of n unique ids
 * of dimension 16, against the bound of 1.1 x ids x (8 + 4 dim): the ids out, the rows back, and gRPC's
 * framing and the per-call proof within 10 %. The connection's own count ({@code PsConnection.wireBytes}, what
 * {@code ps_perf} reports) agrees with the relay's.
 */
class GrpcWireBytesTest {
    private static final int DIM = Shards.DIM;
    private static final int PULLS = 20;

    @ParameterizedTest
    @ValueSource(ints = {512, 4096})
    void aSparsePullStaysWithinTheBound(int n) throws Exception {
        PsOptions options = Shards.options(JobToken.random());
        long[] ids = new Random(n).longs(n * 2L).distinct().limit(n).toArray();
        assertEquals(n, ids.length, "unique ids");
        MemorySegment idSegment = Shards.ids(ids);
        MemorySegment out = Shards.floats((long) n * DIM);
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             CountingProxy proxy = new CountingProxy(server.endpoint());
             PsConnection c = Shards.GRPC.connect(proxy.endpoint(), options)) {
            for (int warm = 0; warm < 3; warm++) {
                c.pullSparse("emb", idSegment, n, out);
            }
            long before = proxy.bytes();
            long counted = c.wireBytes();
            for (int p = 0; p < PULLS; p++) {
                c.pullSparse("emb", idSegment, n, out);
            }
            double perPull = (proxy.bytes() - before) / (double) PULLS;
            double countedPerPull = (c.wireBytes() - counted) / (double) PULLS;
            // the connection's own count (ps_perf's wire_bytes) is the relay's, up to a frame still in flight
            assertEquals(perPull, countedPerPull, 0.005 * perPull, "the connection's wireBytes against the relay's count");
            double bound = 1.1 * n * (8 + 4 * DIM);
            double payload = n * (8.0 + 4 * DIM);
            System.out.printf("sparse pull of %d unique ids, dim %d: %.0f wire bytes per pull, payload %.0f (x%.4f),"
                    + " bound %.0f%n", n, DIM, perPull, payload, perPull / payload, bound);
            assertTrue(perPull <= bound, perPull + " bytes per pull > bound " + bound);
            assertTrue(perPull >= payload, "the relay saw less than the payload: " + perPull);
        }
    }
}
