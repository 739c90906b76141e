package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import org.fleet4j.pserver.transport.CallProof;

/**
 * grpc++'s framing. Every frame is length-prefixed: an int32 with the bytes that follow, then a header, then the
 * body. A request's header: magic {@code F4PP}, version, call, two reserved bytes, the session (32 bytes), the
 * sequence (int64) and the HMAC proof of the job token (32 bytes) over both and the call's name, as the grpc
 * protocol's {@link CallProof}. A reply's header: magic, version, call, status (int16), the request's sequence.
 * Numbers are big-endian; ids and floats in bodies little-endian, packed, as in the grpc protocol.
 *
 * <p>A PULL_MANY body: int32 count of dense blocks, each a name and an int32 block; int32 count of sparse tables,
 * each a name, an int32 count n and n ids. Its reply: every dense block's values, then every table's n rows, in the
 * request's order. A PUSH_MANY body: int32 count of dense blocks, each a name, an int32 block, an int32 count of
 * floats and the gradient; int32 count of sparse tables, each a name, an int32 n, an int32 row dimension, n ids and
 * n gradient rows. Its reply is empty, sent once every entry is applied.
 */
final class Frames {
    static final int MAGIC = 0x46345050;
    static final byte VERSION = 1;
    static final int LENGTH_BYTES = Integer.BYTES;
    /** Magic, version, call, reserved, proof. */
    static final int REQUEST_HEADER = 4 + 1 + 1 + 2 + CallProof.HEADER_BYTES;
    /** Magic, version, call, status, sequence. */
    static final int REPLY_HEADER = 4 + 1 + 1 + 2 + 8;
    /** The largest frame either end takes, as grpc's largest message: 1 GiB. */
    static final long MAX_FRAME = 1L << 30;
    /** The largest table or parameter name. */
    static final int MAX_NAME = 1024;

    static final short OK = 0;
    /** A table, block, id or size the server cannot serve; the body is its message. */
    static final short BAD_REQUEST = 1;
    /** Anything else that failed on the server; the body is its message. */
    static final short FAILED = 2;
    /** No good proof of the job token; the body is why, and the server closes the connection. */
    static final short REFUSED = 3;

    private Frames() {
    }

    /**
     * The calls of the data port. Barriers, save, load, stats and stop are the control port's (gRPC). PULL_MANY and
     * PUSH_MANY carry a whole step for the server in one frame (tensor_fuse, the star_server protocols).
     */
    enum Call {
        HELLO("Hello"), PULL_DENSE("PullDense"), PUSH_DENSE("PushDense"), PULL_SPARSE("PullSparse"),
        PUSH_SPARSE("PushSparse"), PULL_MANY("PullMany"), PUSH_MANY("PushMany");

        /** The name a call's proof is made over. */
        final String method = "fleet4j.pserver.grpcpp/" + name();
        /** The grpc service's method of the same meaning, the name Stats counts it under. */
        final String grpcMethod;

        Call(String grpcMethod) {
            this.grpcMethod = grpcMethod;
        }

        static Call of(int code) {
            Call[] all = values();
            return code >= 0 && code < all.length ? all[code] : null;
        }
    }

    /** Writes a request's length and header; {@code proof} is a {@link CallProof#header} (zeros without a token). */
    static void writeRequestHeader(ByteBuf out, Call call, long bodyBytes, byte[] proof) {
        out.writeInt(Math.toIntExact(REQUEST_HEADER + bodyBytes));
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(call.ordinal()).writeShort(0);
        out.writeBytes(proof);
    }

    static void writeReplyHeader(ByteBuf out, Call call, short status, long sequence, long bodyBytes) {
        out.writeInt(Math.toIntExact(REPLY_HEADER + bodyBytes));
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(call.ordinal()).writeShort(status).writeLong(sequence);
    }

    /** A name as int16 length and UTF-8 bytes. */
    static void writeName(ByteBuf out, String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        out.writeShort(utf8.length).writeBytes(utf8);
    }

    static int nameBytes(String name) {
        return 2 + name.getBytes(StandardCharsets.UTF_8).length;
    }

    static String readName(ByteBuf in) {
        int n = in.readUnsignedShort();
        if (n > MAX_NAME || n > in.readableBytes()) {
            throw new IllegalArgumentException("a name of " + n + " bytes does not fit the frame");
        }
        String name = in.toString(in.readerIndex(), n, StandardCharsets.UTF_8);
        in.skipBytes(n);
        return name;
    }
}
