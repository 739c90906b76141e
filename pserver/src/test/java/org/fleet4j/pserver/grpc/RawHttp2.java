package org.fleet4j.pserver.grpc;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A gRPC client written frame by frame on a plain socket, so a test can send what no gRPC library would: a message
 * whose length prefix lies, a stream that ends in the middle of a message, an HTTP/2 frame cut short. One call, on
 * stream 1, without a job-token proof (the server under test checks none).
 */
final class RawHttp2 implements AutoCloseable {
    private static final int DATA = 0;
    private static final int HEADERS = 1;
    private static final int RST_STREAM = 3;
    private static final int SETTINGS = 4;
    private static final int GOAWAY = 7;
    private static final int END_STREAM = 0x1;
    private static final int ACK = 0x1;
    private static final int END_HEADERS = 0x4;

    /** What the server answered the call: a gRPC status (code and message), a reset stream, or a closed connection. */
    record Answer(String grpcStatus, String grpcMessage, boolean reset, boolean closed) {
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final String endpoint;
    private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(true);

    RawHttp2(String endpoint) throws IOException {
        this.endpoint = endpoint;
        socket = GrpcFaultTest.connect(endpoint);
        socket.setSoTimeout(30_000);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        frame(SETTINGS, 0, 0, new byte[0]);
    }

    /** Opens stream 1: a call of {@code fullMethodName} (service/method). */
    void startCall(String fullMethodName) throws IOException {
        Http2Headers h = new DefaultHttp2Headers().method("POST").scheme("http").path("/" + fullMethodName)
                .authority(endpoint).add("content-type", "application/grpc").add("te", "trailers");
        ByteBuf block = Unpooled.buffer();
        byte[] bytes;
        try {
            new DefaultHttp2HeadersEncoder(Http2HeadersEncoder.NEVER_SENSITIVE, false).encodeHeaders(1, h, block);
            bytes = new byte[block.writerIndex()];
            block.getBytes(0, bytes);
        } catch (Http2Exception e) {
            throw new IOException(e);
        } finally {
            block.release();
        }
        frame(HEADERS, END_HEADERS, 1, bytes);
    }

    /** A DATA frame on stream 1 carrying a gRPC message prefix that claims {@code claimed} bytes, then {@code body}. */
    void message(long claimed, byte[] body, boolean endStream) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(5 + body.length);
        b.put((byte) 0).putInt((int) claimed).put(body);
        frame(DATA, endStream ? END_STREAM : 0, 1, b.array());
    }

    /** The header of a DATA frame of {@code length} bytes on stream 1 and only {@code sent} of them. */
    void cutFrame(int length, byte[] sent) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(9);
        b.put((byte) (length >>> 16)).put((byte) (length >>> 8)).put((byte) length).put((byte) DATA).put((byte) 0)
                .putInt(1);
        out.write(b.array());
        out.write(sent);
        out.flush();
    }

    /** Reads frames until stream 1 ends (trailers with END_STREAM, or a reset) or the server closes the connection. */
    Answer answer() throws IOException {
        String status = null;
        String message = null;
        while (true) {
            int length;
            int type;
            int flags;
            int stream;
            byte[] payload;
            try {
                length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
                type = in.readUnsignedByte();
                flags = in.readUnsignedByte();
                stream = in.readInt() & 0x7fffffff;
                payload = new byte[length];
                in.readFully(payload);
            } catch (SocketTimeoutException e) {
                throw e;
            } catch (EOFException e) {
                return new Answer(status, message, false, true);
            } catch (IOException reset) {
                return new Answer(status, message, false, true);
            }
            if (type == SETTINGS && (flags & ACK) == 0) {
                frame(SETTINGS, ACK, 0, new byte[0]);
            } else if (type == HEADERS && stream == 1) {
                Http2Headers h;
                try {
                    h = decoder.decodeHeaders(1, Unpooled.wrappedBuffer(payload));
                } catch (Http2Exception e) {
                    throw new IOException(e);
                }
                if (h.get("grpc-status") != null) {
                    status = h.get("grpc-status").toString();
                    message = h.get("grpc-message") == null ? "" : h.get("grpc-message").toString();
                }
                if ((flags & END_STREAM) != 0) {
                    return new Answer(status, message, false, false);
                }
            } else if (type == RST_STREAM && stream == 1) {
                return new Answer(status, message, true, false);
            } else if (type == GOAWAY) {
                return new Answer(status, message, false, true);
            }
        }
    }

    private void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(9 + payload.length);
        b.put((byte) (payload.length >>> 16)).put((byte) (payload.length >>> 8)).put((byte) payload.length)
                .put((byte) type).put((byte) flags).putInt(stream).put(payload);
        out.write(b.array());
        out.flush();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
