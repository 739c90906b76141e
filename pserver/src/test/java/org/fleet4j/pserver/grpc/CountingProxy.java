package org.fleet4j.pserver.grpc;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.cluster.TcpStore;

/** A loopback TCP relay in front of a server for one connection, counting the bytes each way: the wire's own count. */
public final class CountingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final AtomicLong toServer = new AtomicLong();
    private final AtomicLong toClient = new AtomicLong();
    private final Thread acceptor;

    public CountingProxy(String serverEndpoint) throws IOException {
        InetSocketAddress server = TcpStore.parseHostPort(serverEndpoint, "endpoint");
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("counting-proxy").start(() -> {
            try (Socket client = listener.accept(); Socket upstream = new Socket(server.getHostString(), server.getPort())) {
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                Thread back = Thread.ofPlatform().daemon().name("counting-proxy-back")
                        .start(() -> relay(upstream, client, toClient));
                relay(client, upstream, toServer);
                back.join();
            } catch (IOException | InterruptedException e) {
                // the test closed the proxy
            }
        });
    }

    public String endpoint() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Bytes relayed so far, both ways. */
    public long bytes() {
        return toServer.get() + toClient.get();
    }

    private static void relay(Socket from, Socket to, AtomicLong count) {
        byte[] buf = new byte[64 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                count.addAndGet(n);
                out.write(buf, 0, n);
            }
            to.shutdownOutput();
        } catch (IOException e) {
            // one side went away
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        listener.close();
        acceptor.join(10_000);
    }
}
