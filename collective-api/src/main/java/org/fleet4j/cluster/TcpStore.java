package org.fleet4j.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.text.Quoted;

/** Client of a {@link StoreServer} over TCP; optionally also hosts the server (rank 0). Thread-safe. */
public final class TcpStore implements Store {
    /** Slack on top of a request's own wait, for the server's reply to travel back. */
    private static final long REPLY_SLACK_MS = 30_000;

    private final String master;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final StoreServer hosted;

    private TcpStore(String master, Socket socket, StoreServer hosted) throws IOException {
        this.master = master;
        this.socket = socket;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        this.hosted = hosted;
    }

    /** Starts a server on {@code bind} (port 0: any free port) and returns a client of it that owns it. */
    public static TcpStore host(InetSocketAddress bind, String jobId, JobToken token, Duration timeout) {
        StoreServer server;
        try {
            server = new StoreServer(bind, jobId, token);
        } catch (BindException e) {
            throw new CollectiveException("cannot host the rendezvous store on " + bind.getHostString() + ":" + bind.getPort()
                    + ": port " + bind.getPort() + " is already in use, by another job or program (" + e.getMessage() + "); pick another --start_port"
                    + " or --master, or leave both out to get a free port", e);
        } catch (IOException e) {
            throw new CollectiveException("cannot host the rendezvous store on " + bind + ": " + e.getMessage()
                    + " (is the port taken? pick another --master port)", e);
        }
        try {
            String host = bind.getAddress().isAnyLocalAddress() ? "127.0.0.1" : bind.getAddress().getHostAddress();
            return connect(host, server.port(), jobId, token, timeout, server);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * Connects to the store at host:port, retrying while the host is not yet listening, for up to {@code timeout}.
     * Fails at once when the store there does not prove that it holds {@code token}: it belongs to another job.
     */
    public static TcpStore connect(String host, int port, String jobId, JobToken token, Duration timeout) {
        return connect(host, port, jobId, token, timeout, null);
    }

    /** Parses "host:port" as given by --master or FLEET_MASTER. */
    public static InetSocketAddress parseHostPort(String hostPort, String what) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException(what + " " + Quoted.of(hostPort) + " is not host:port");
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " " + Quoted.of(hostPort) + ": port is not a number");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(what + " " + Quoted.of(hostPort) + ": port outside 0..65535");
        }
        return InetSocketAddress.createUnresolved(hostPort.substring(0, colon), port);
    }

    private static TcpStore connect(String host, int port, String jobId, JobToken token, Duration timeout, StoreServer hosted) {
        String master = host + ":" + port;
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        long backoffNanos = 10_000_000;
        while (System.nanoTime() < deadline) {
            Socket s = new Socket();
            try {
                int left = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000));
                s.connect(new InetSocketAddress(host, port), left);
                s.setTcpNoDelay(true);
                s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis() + REPLY_SLACK_MS));
                TcpStore store = new TcpStore(master, s, hosted);
                store.hello(jobId, token);
                return store;
            } catch (ConnectException e) {
                last = e;
                closeQuietly(s);
                LockSupport.parkNanos(backoffNanos);
                backoffNanos = Math.min(backoffNanos * 2, 200_000_000);
            } catch (ForeignStore e) {
                closeQuietly(s);
                throw new CollectiveException(e.getMessage(), e);
            } catch (IOException e) {
                closeQuietly(s);
                throw new CollectiveException("cannot talk to the rendezvous store at " + master + ": " + e, e);
            }
        }
        throw new CollectiveException("no rendezvous store at " + master + " after " + timeout.toMillis()
                + " ms (is rank 0 running and FLEET_MASTER right?)" + (last == null ? "" : ": " + last.getMessage()), last);
    }

    /** The client's side of the handshake in {@link StoreProtocol}. */
    private void hello(String jobId, JobToken token) throws IOException {
        byte[] job = jobId.getBytes(StandardCharsets.UTF_8);
        byte[] clientNonce = JobToken.nonce();
        out.writeInt(StoreProtocol.MAGIC);
        out.writeByte(StoreProtocol.HELLO);
        StoreServer.writeField(out, job);
        out.write(clientNonce);
        out.flush();
        if (in.readByte() != StoreProtocol.CHALLENGE) {
            throw new ForeignStore("the store at " + master + " rejected job id '" + jobId + "' (it serves another job)");
        }
        byte[] serverNonce = new byte[JobToken.NONCE_BYTES];
        in.readFully(serverNonce);
        byte[] serverProof = new byte[JobToken.PROOF_BYTES];
        in.readFully(serverProof);
        if (!token.verifies(serverProof, StoreProtocol.SERVER_PROOF, job, clientNonce, serverNonce)) {
            throw new ForeignStore("the store at " + master + " belongs to another job: it does not hold this job's token"
                    + " (port " + socket.getPort() + " is held by another job also named '" + jobId + "'; give this job"
                    + " another --start_port or --master, or leave both out to get a free port)");
        }
        out.write(token.proof(StoreProtocol.CLIENT_PROOF, job, serverNonce, clientNonce));
        out.flush();
        if (in.readByte() != StoreProtocol.OK) {
            throw new ForeignStore("the store at " + master + " refused this job's token (it serves another job also named '"
                    + jobId + "')");
        }
    }

    /** The store answered, but for another job; trying again cannot help. */
    private static final class ForeignStore extends IOException {
        ForeignStore(String message) {
            super(message);
        }
    }

    @Override
    public synchronized void set(String key, byte[] value) {
        call("set '" + key + "'", () -> {
            begin(StoreProtocol.SET);
            field(key);
            StoreServer.writeField(out, value);
            out.flush();
            expectOk(in.readByte(), "set '" + key + "'");
            return null;
        });
    }

    @Override
    public synchronized byte[] get(String key, Duration timeout) {
        return call("get '" + key + "'", () -> {
            begin(StoreProtocol.GET);
            field(key);
            out.writeLong(timeout.toMillis());
            out.flush();
            byte status = in.readByte();
            if (status == StoreProtocol.TIMEOUT) {
                throw new CollectiveException("key '" + key + "' was not set in the store at " + master + " within "
                        + timeout.toMillis() + " ms (a rank that should publish it has not started or has died)");
            }
            expectOk(status, "get '" + key + "'");
            return StoreServer.readField(in);
        });
    }

    @Override
    public synchronized void waitFor(List<String> keys, Duration timeout) {
        call("wait for " + keys.size() + " keys", () -> {
            begin(StoreProtocol.WAIT);
            out.writeInt(keys.size());
            for (String k : keys) {
                field(k);
            }
            out.writeLong(timeout.toMillis());
            out.flush();
            byte status = in.readByte();
            int n = in.readInt();
            List<String> missing = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                missing.add(new String(StoreServer.readField(in), StandardCharsets.UTF_8));
            }
            if (status == StoreProtocol.TIMEOUT) {
                throw new CollectiveException("store at " + master + ": keys " + missing + " still missing after "
                        + timeout.toMillis() + " ms");
            }
            expectOk(status, "wait");
            return null;
        });
    }

    @Override
    public synchronized long add(String key, long delta) {
        return call("add '" + key + "'", () -> {
            begin(StoreProtocol.ADD);
            field(key);
            out.writeLong(delta);
            out.flush();
            expectOk(in.readByte(), "add '" + key + "'");
            return in.readLong();
        });
    }

    @Override
    public synchronized byte[] compareAndSet(String key, byte[] expected, byte[] desired) {
        return call("compare-and-set '" + key + "'", () -> {
            begin(StoreProtocol.CAS);
            field(key);
            out.writeBoolean(expected != null);
            if (expected != null) {
                StoreServer.writeField(out, expected);
            }
            StoreServer.writeField(out, desired);
            out.flush();
            expectOk(in.readByte(), "compare-and-set '" + key + "'");
            return in.readBoolean() ? StoreServer.readField(in) : null;
        });
    }

    private void begin(byte cmd) throws IOException {
        out.writeInt(StoreProtocol.MAGIC);
        out.writeByte(cmd);
    }

    private void field(String s) throws IOException {
        StoreServer.writeField(out, s.getBytes(StandardCharsets.UTF_8));
    }

    private void expectOk(byte status, String what) {
        if (status != StoreProtocol.OK) {
            throw new CollectiveException("store at " + master + " refused " + what + " (status " + status + ")");
        }
    }

    private interface Request<T> {
        T run() throws IOException;
    }

    private <T> T call(String what, Request<T> request) {
        try {
            return request.run();
        } catch (SocketTimeoutException e) {
            throw new CollectiveException("store at " + master + " did not answer " + what + " in time", e);
        } catch (IOException e) {
            throw new CollectiveException("lost the rendezvous store at " + master + " during " + what
                    + " (did rank 0 exit?): " + e, e);
        }
    }

    @Override
    public void close() {
        closeQuietly(socket);
        if (hosted != null) {
            hosted.close();
        }
    }

    /** The port of the hosted server; only for the store that {@link #host} made. */
    public int hostedPort() {
        if (hosted == null) {
            throw new IllegalStateException("this store client does not host the server");
        }
        return hosted.port();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing; nothing to report
        }
    }
}
