package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;
import org.fleet4j.pserver.grpc.proto.PushSparseRequest;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Messages that lie about their size or end early, sent frame by frame ({@link RawHttp2}) to a grpc server and to the
 * star_server protocols (the same gRPC service): a message claiming more than the inbound limit (1 GiB) is refused on
 * its length prefix with RESOURCE_EXHAUSTED before anything is allocated for it; a stream that ends inside a message,
 * or a connection that closes inside an HTTP/2 frame, is dropped with no table touched. After each the server serves a
 * well-behaved worker correctly.
 */
class GrpcMessageFaultTest {
    private static final long LIMIT = GrpcTransport.MAX_MESSAGE_BYTES;
    private static final long GROWTH_ALLOWED = 64L << 20;
    private static final String PUSH_SPARSE = ParameterServerGrpc.getPushSparseMethod().getFullMethodName();

    @ParameterizedTest
    @ValueSource(strings = {"grpc", "star_server", "star_server_lite"})
    void aMessageClaimingMoreThanTheLimitIsRefusedOnItsPrefixWithNothingAllocated(String protocol) throws Exception {
        PsTransport transport = PsTransport.forProtocol(protocol);
        PsOptions options = Shards.options(null);
        TableShard shard = Shards.shard();
        try (PsServer server = transport.serve(shard, options)) {
            for (long claimed : new long[]{LIMIT + 1, Integer.MAX_VALUE}) {
                long before = memoryInUse();
                RawHttp2.Answer answer;
                try (RawHttp2 raw = new RawHttp2(server.endpoint())) {
                    raw.startCall(PUSH_SPARSE);
                    raw.message(claimed, new byte[1024], false);
                    answer = raw.answer();
                }
                long grown = memoryInUse() - before;
                assertEquals("8", answer.grpcStatus(), "RESOURCE_EXHAUSTED for a claim of " + claimed + ": " + answer);
                assertTrue(answer.grpcMessage().contains("exceeds maximum size " + LIMIT + ": " + claimed),
                        answer.grpcMessage());
                assertTrue(grown < GROWTH_ALLOWED, "heap and direct memory grew by " + grown + " bytes for a claim of "
                        + claimed);
            }
            assertEquals(0, shard.sparseTable("wide").keys(), "no refused message reached a table");
            try (PsConnection c = transport.connect(server.endpoint(), options)) {
                GrpcFaultTest.servesCorrectly(c, shard);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc", "star_server", "star_server_lite"})
    void aTruncatedMessageOrFrameIsDroppedAndTouchesNoTable(String protocol) throws Exception {
        PsTransport transport = PsTransport.forProtocol(protocol);
        PsOptions options = Shards.options(null);
        TableShard shard = Shards.shard();
        byte[] push = PushSparseRequest.newBuilder().setTable("wide")
                .setIds(ByteString.copyFrom(new byte[8 * 3]))
                .setGrads(ByteString.copyFrom(new byte[4 * 3])).build().toByteArray();
        byte[] firstHalf = Arrays.copyOf(push, push.length / 2);
        try (PsServer server = transport.serve(shard, options)) {
            // the stream ends (END_STREAM) half way through the message its prefix announced
            try (RawHttp2 raw = new RawHttp2(server.endpoint())) {
                raw.startCall(PUSH_SPARSE);
                raw.message(push.length, firstHalf, true);
                RawHttp2.Answer answer = raw.answer();
                assertFalse(answer.grpcStatus() == null && !answer.reset() && !answer.closed(), answer.toString());
                assertTrue(answer.grpcStatus() == null || !answer.grpcStatus().equals("0"),
                        "a call cut short is not answered OK: " + answer);
            }
            // the connection closes inside a message, and inside an HTTP/2 frame
            try (RawHttp2 raw = new RawHttp2(server.endpoint())) {
                raw.startCall(PUSH_SPARSE);
                raw.message(push.length, firstHalf, false);
            }
            try (RawHttp2 raw = new RawHttp2(server.endpoint())) {
                raw.startCall(PUSH_SPARSE);
                raw.cutFrame(5 + push.length, Arrays.copyOf(new byte[]{0, 0, 0, 0, (byte) push.length}, 5));
            }
            try (PsConnection c = transport.connect(server.endpoint(), options)) {
                GrpcFaultTest.servesCorrectly(c, shard);
            }
            assertEquals(0, shard.sparseTable("wide").keys(), "no truncated push reached a table");
        }
    }

    /** Heap in use (after a collection) and direct buffers, the JDK's and Netty's own. */
    private static long memoryInUse() {
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long direct = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            direct += pool.getMemoryUsed();
        }
        long netty = PlatformDependent.usedDirectMemory();
        return heap + direct + Math.max(0, netty);
    }
}
