package org.fleet4j.pserver.grpcpp;

import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.fleet4j.collective.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.junit.jupiter.api.Test;

/**
 * Copies on grpc++'s pull and push paths, counted by both ends: with off-heap buffers nothing goes through the Java
 * heap (no byte[] anywhere between the socket and the table or the worker's buffer), a request for one network
 * thread is sent from the caller's own memory without even an off-heap gather, and a received body is copied (once,
 * off-heap) only when it came over several socket reads.
 */
class ZeroCopyTest {
    private static final int DIM = Shards.DIM;

    @Test
    void offHeapPullsAndPushesCopyNothingThroughTheHeap() {
        PsOptions options = Shards.options(JobToken.random());
        Random random = new Random(1);
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(1, false, false));
             PsConnection c = Loopback.connect(server, options)) {
            GrpcppConnection fast = (GrpcppConnection) c;
            long[] raw = new long[4096];
            for (int i = 0; i < raw.length; i++) {
                raw[i] = random.nextLong();
            }
            MemorySegment ids = Shards.ids(raw);
            for (int step = 0; step < 3; step++) {
                c.pullSparse("emb", ids, raw.length, Shards.floats((long) raw.length * DIM));
                c.pushSparse("emb", ids, raw.length, Shards.randomFloats(random, (long) raw.length * DIM));
                c.pullDense("fc.w", 0, Shards.floats(64 * DIM));
                c.pushDense("fc.w", 0, Shards.randomFloats(random, 64 * DIM));
            }
            assertEquals(0, server.copies().heapBytes(), "the server received every body in direct memory");
            assertEquals(0, fast.copies().heapBytes(), "the worker sent from and received into off-heap memory");
            assertEquals(0, fast.copies().gatheredBytes(), "one server thread: requests went out as given");
            // The one off-heap copy a receiver may make: a body over several socket reads (a read is at most 64 KB,
            // a 4,096-id push is 295 KB) put together into one buffer; a body that came in one read is used in place.
            CopyCount received = server.copies();
            assertTrue(received.reassembledBytes() >= 3L * 4096 * (8 + DIM * 4),
                    "every push body was counted as put together: " + received.reassembledBytes());
            assertTrue(received.reassembledBytes() < received.receivedBodyBytes(),
                    "bodies that fit a read were used where they lay: " + received.reassembledBytes() + " of "
                            + received.receivedBodyBytes());

            float[] heapRows = new float[4 * DIM];
            c.pullSparse("emb", MemorySegment.ofArray(new long[]{1, 2, 3, 4}), 4, MemorySegment.ofArray(heapRows));
            assertEquals(4 * 8 + 4 * DIM * 4, fast.copies().heapBytes(), "heap buffers are counted: ids and rows");
        }
    }

    @Test
    void requestsSpreadOverThreadsAreGatheredOffHeapOnly() {
        PsOptions options = Shards.options(JobToken.random());
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(4, false, false));
             PsConnection c = Loopback.connect(server, options)) {
            GrpcppConnection fast = (GrpcppConnection) c;
            long[] raw = new long[1000];
            for (int i = 0; i < raw.length; i++) {
                raw[i] = i * 7919L;
            }
            MemorySegment ids = Shards.ids(raw);
            float[] rows = pullSparse(c, "emb", ids, raw.length, DIM);
            c.pushSparse("emb", ids, raw.length, Shards.randomFloats(new Random(2), (long) raw.length * DIM));
            assertEquals(rows.length, raw.length * DIM);
            assertEquals(0, server.copies().heapBytes());
            assertEquals(0, fast.copies().heapBytes());
            assertTrue(fast.copies().gatheredBytes() == 2L * raw.length * 8 + (long) raw.length * DIM * 4,
                    "ids gathered for the pull and the push, rows for the push: " + fast.copies().gatheredBytes());
        }
    }
}
