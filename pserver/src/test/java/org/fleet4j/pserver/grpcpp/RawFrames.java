package org.fleet4j.pserver.grpcpp;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.transport.CallProof;

/** A hand-made grpc++ client on a plain socket: frames as a stranger or a broken worker would send them. */
final class RawFrames implements AutoCloseable {
    /** A reply: its status and body. */
    record Reply(short status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    RawFrames(String endpoint) throws IOException {
        InetSocketAddress a = TcpStore.parseHostPort(endpoint, "endpoint");
        socket = new Socket(a.getHostString(), a.getPort());
        socket.setSoTimeout(30_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /** Hello for network thread {@code thread}; the session it opened (null when the server checks no token). */
    byte[] hello(int thread) throws IOException {
        ByteBuffer body = ByteBuffer.allocate(36);
        body.put(JobToken.nonce()).putInt(thread);
        Reply r = call(Frames.Call.HELLO, new byte[CallProof.HEADER_BYTES], body.array());
        ByteBuffer b = ByteBuffer.wrap(r.body());
        b.position(16);
        boolean session = b.get() != 0;
        byte[] s = new byte[32];
        b.get(s);
        return session ? s : null;
    }

    /** A request's bytes: length, header with {@code proof}, {@code body}. */
    static byte[] frame(Frames.Call call, byte[] proof, byte[] body) {
        ByteBuffer f = ByteBuffer.allocate(Frames.LENGTH_BYTES + Frames.REQUEST_HEADER + body.length);
        f.putInt(Frames.REQUEST_HEADER + body.length).putInt(Frames.MAGIC).put(Frames.VERSION)
                .put((byte) call.ordinal()).putShort((short) 0).put(proof).put(body);
        return f.array();
    }

    Reply call(Frames.Call call, byte[] proof, byte[] body) throws IOException {
        send(frame(call, proof, body));
        return reply();
    }

    void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    Reply reply() throws IOException {
        int length = in.readInt();
        byte[] rest = new byte[length];
        in.readFully(rest);
        ByteBuffer b = ByteBuffer.wrap(rest);
        b.position(6);
        short status = b.getShort();
        byte[] body = new byte[length - Frames.REPLY_HEADER];
        b.position(Frames.REPLY_HEADER);
        b.get(body);
        return new Reply(status, body);
    }

    /** A pull or push body for {@code table}: the name, the count, the ids and then {@code floats}. */
    static byte[] sparseBody(String table, long[] ids, float[] floats) {
        byte[] name = table.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + name.length + 4 + ids.length * 8 + floats.length * 4);
        b.putShort((short) name.length).put(name).putInt(ids.length);
        b.order(ByteOrder.LITTLE_ENDIAN);
        for (long id : ids) {
            b.putLong(id);
        }
        for (float f : floats) {
            b.putFloat(f);
        }
        return b.array();
    }

    /** Reads until the server closes: true when it did (end of stream or a reset). */
    boolean closedByServer() {
        byte[] buf = new byte[4096];
        try {
            while (in.read(buf) >= 0) {
                // what the server still says before it closes
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
