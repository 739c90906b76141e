package org.fleet4j.pserver.grpcpp;

import static org.fleet4j.pserver.grpc.Shards.pullSparse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Copies on grpc++'s pull and push paths, counted by both ends: with off-heap buffers nothing goes through the Java
 * heap (no byte[] anywhere between the socket and the table or the worker's buffer), a request for one network
 * thread is sent from the caller's own memory without even an off-heap gather, and of a received body that came over
 * several socket reads only the part that came with its header is copied (off-heap): the socket writes the rest into
 * the body's buffer. Both with the worker's network threads and without (0: the calling threads read and write).
 */
class ZeroCopyTest {
    private static final int DIM = Shards.DIM;

    @ParameterizedTest(name = "worker network threads: {0}")
    @ValueSource(ints = {2, 0})
    void offHeapPullsAndPushesCopyNothingThroughTheHeap(int workerThreads) {
        PsOptions options = Shards.options(JobToken.random());
        Random random = new Random(1);
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(1, false, false));
             PsConnection c = Loopback.connect(server, options, workerThreads)) {
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
            // The one off-heap copy a receiver may make: of a body over several socket reads (a read is at most
            // 64 KiB, a 4,096-id push 295 KB, a pull's reply 262 KB), the part that came in the read with its header;
            // the socket writes the reads after that straight into the body's buffer. A body that came in one read
            // is used where it lies.
            int maxRead = 64 << 10;
            long pushBody = 4096L * (8 + DIM * 4);
            long pullReply = 4096L * DIM * 4;
            CopyCount received = server.copies();
            assertTrue(received.readInPlaceBytes() >= 3 * (pushBody - maxRead),
                    "the push bodies were read in place: " + received.readInPlaceBytes());
            assertTrue(received.reassembledBytes() <= 3L * 4 * maxRead,
                    "at most a read's worth copied per frame: " + received.reassembledBytes());
            assertTrue(received.reassembledBytes() + received.readInPlaceBytes() < received.receivedBodyBytes(),
                    "bodies that fit a read were used where they lay: " + received.reassembledBytes() + " copied, "
                            + received.readInPlaceBytes() + " read in place, of " + received.receivedBodyBytes());
            assertTrue(fast.copies().readInPlaceBytes() >= 3 * (pullReply - maxRead),
                    "the worker read the pulls' rows in place: " + fast.copies().readInPlaceBytes());
            assertTrue(fast.copies().reassembledBytes() <= 3L * 4 * maxRead,
                    "the worker copied at most a read's worth per reply: " + fast.copies().reassembledBytes());

            float[] heapRows = new float[4 * DIM];
            c.pullSparse("emb", MemorySegment.ofArray(new long[]{1, 2, 3, 4}), 4, MemorySegment.ofArray(heapRows));
            assertEquals(4 * 8 + 4 * DIM * 4, fast.copies().heapBytes(), "heap buffers are counted: ids and rows");
        }
    }

    @ParameterizedTest(name = "worker network threads: {0}")
    @ValueSource(ints = {2, 0})
    void requestsSpreadOverThreadsAreGatheredOffHeapOnly(int workerThreads) {
        PsOptions options = Shards.options(JobToken.random());
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(4, false, false));
             PsConnection c = Loopback.connect(server, options, workerThreads)) {
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
