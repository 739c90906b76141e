package org.fleet4j.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.fleet4j.text.Quoted;

/**
 * The rendezvous store's server, hosted by rank 0 or a master. Clients must first say hello with the job id and
 * prove that they hold the job token, and the server proves it to them ({@link StoreProtocol} has the handshake);
 * anything else (a stranger, random bytes, another job) is logged, rate-limited, and disconnected while the job
 * carries on, having read and changed nothing.
 */
public final class StoreServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(StoreServer.class.getName());
    private static final int HELLO_TIMEOUT_MS = 10_000;

    /** Strangers can provoke these at will: the first 5 of every 10 s are written, the rest counted. */
    private final RateLimitedLog rejections = new RateLimitedLog(LOG, 5, 10, TimeUnit.SECONDS);
    private final String jobId;
    private final JobToken token;
    private final ServerSocket server;
    private final Map<String, byte[]> values = new HashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final Thread acceptThread;

    public StoreServer(InetSocketAddress bind, String jobId, JobToken token) throws IOException {
        this.jobId = jobId;
        this.token = token;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(bind, 128);
        acceptThread = Thread.ofPlatform().daemon().name("fleet4j-store-accept").start(this::acceptLoop);
    }

    public int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                clients.add(s);
                if (closed) {
                    // accepted while close() ran: close() may already have swept the clients
                    s.close();
                    break;
                }
                Thread.ofVirtual().name("fleet4j-store-conn").start(() -> serve(s));
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "store: accept failed on port " + port() + ": " + e);
                }
            }
        }
    }

    private void serve(Socket s) {
        String peer = String.valueOf(s.getRemoteSocketAddress());
        try (s) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(HELLO_TIMEOUT_MS);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            String problem = closed ? "the store is closing" : handshake(in, out);
            if (problem != null) {
                rejections.warn("store: closed connection from " + peer + ": " + problem);
                out.writeByte(StoreProtocol.REJECTED);
                out.flush();
                return;
            }
            out.writeByte(StoreProtocol.OK);
            out.flush();
            s.setSoTimeout(0);
            while (!closed) {
                int magic;
                try {
                    magic = in.readInt();
                } catch (EOFException eof) {
                    return;
                }
                if (magic != StoreProtocol.MAGIC) {
                    rejections.warn("store: closed connection from " + peer
                            + ": expected a request (magic " + Integer.toHexString(StoreProtocol.MAGIC) + "), got "
                            + Integer.toHexString(magic));
                    return;
                }
                handle(in.readByte(), in, out);
                out.flush();
            }
        } catch (SocketTimeoutException e) {
            rejections.warn("store: closed connection from " + peer + ": no hello within "
                    + HELLO_TIMEOUT_MS + " ms");
        } catch (BadRequest e) {
            rejections.warn("store: closed connection from " + peer + ": " + e.getMessage());
        } catch (SocketException | EOFException e) {
            // the client went away; nothing to report
        } catch (IOException e) {
            if (!closed) {
                rejections.warn("store: connection from " + peer + " failed: " + e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            clients.remove(s);
        }
    }

    /** Null when the client proved the job token, else what is wrong; on the way it proves the token to the client. */
    private String handshake(DataInputStream in, DataOutputStream out) throws IOException {
        int magic = in.readInt();
        if (magic != StoreProtocol.MAGIC) {
            return "not a Fleet4J store client (first 4 bytes " + Integer.toHexString(magic) + ")";
        }
        byte cmd = in.readByte();
        if (cmd != StoreProtocol.HELLO) {
            return "expected hello, got command " + cmd;
        }
        String theirJob = new String(readField(in), StandardCharsets.UTF_8);
        if (!theirJob.equals(jobId)) {
            return "client belongs to job " + Quoted.of(theirJob) + ", this store serves job " + Quoted.of(jobId);
        }
        byte[] clientNonce = new byte[JobToken.NONCE_BYTES];
        in.readFully(clientNonce);
        byte[] serverNonce = JobToken.nonce();
        byte[] job = jobId.getBytes(StandardCharsets.UTF_8);
        out.writeByte(StoreProtocol.CHALLENGE);
        out.write(serverNonce);
        out.write(token.proof(StoreProtocol.SERVER_PROOF, job, clientNonce, serverNonce));
        out.flush();
        byte[] clientProof = new byte[JobToken.PROOF_BYTES];
        in.readFully(clientProof);
        if (!token.verifies(clientProof, StoreProtocol.CLIENT_PROOF, job, serverNonce, clientNonce)) {
            return "wrong job token (the client names job '" + jobId + "' but does not hold its token)";
        }
        return null;
    }

    private void handle(byte cmd, DataInputStream in, DataOutputStream out) throws IOException, InterruptedException {
        switch (cmd) {
            case StoreProtocol.SET -> {
                String key = readKey(in);
                byte[] value = readField(in);
                lock.lock();
                try {
                    values.put(key, value);
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
                out.writeByte(StoreProtocol.OK);
            }
            case StoreProtocol.GET -> {
                String key = readKey(in);
                long timeoutMs = in.readLong();
                byte[] v = awaitKeys(List.of(key), timeoutMs).isEmpty() ? valueOf(key) : null;
                if (v == null) {
                    out.writeByte(StoreProtocol.TIMEOUT);
                } else {
                    out.writeByte(StoreProtocol.OK);
                    writeField(out, v);
                }
            }
            case StoreProtocol.WAIT -> {
                int n = in.readInt();
                if (n < 0 || n > 1_000_000) {
                    throw new BadRequest("wait for " + n + " keys");
                }
                List<String> keys = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    keys.add(readKey(in));
                }
                List<String> missing = awaitKeys(keys, in.readLong());
                out.writeByte(missing.isEmpty() ? StoreProtocol.OK : StoreProtocol.TIMEOUT);
                out.writeInt(missing.size());
                for (String k : missing) {
                    writeField(out, k.getBytes(StandardCharsets.UTF_8));
                }
            }
            case StoreProtocol.ADD -> {
                String key = readKey(in);
                long delta = in.readLong();
                long result;
                lock.lock();
                try {
                    byte[] old = values.get(key);
                    long current = old == null ? 0 : parseCounter(key, old);
                    result = current + delta;
                    values.put(key, Long.toString(result).getBytes(StandardCharsets.UTF_8));
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
                out.writeByte(StoreProtocol.OK);
                out.writeLong(result);
            }
            case StoreProtocol.CAS -> {
                String key = readKey(in);
                byte[] expected = in.readBoolean() ? readField(in) : null;
                byte[] desired = readField(in);
                byte[] after;
                lock.lock();
                try {
                    byte[] current = values.get(key);
                    if (expected == null ? current == null : (current != null && Arrays.equals(current, expected))) {
                        values.put(key, desired);
                        changed.signalAll();
                        current = desired;
                    }
                    after = current;
                } finally {
                    lock.unlock();
                }
                out.writeByte(StoreProtocol.OK);
                out.writeBoolean(after != null);
                if (after != null) {
                    writeField(out, after);
                }
            }
            default -> throw new BadRequest("unknown command " + cmd);
        }
    }

    private byte[] valueOf(String key) {
        lock.lock();
        try {
            return values.get(key);
        } finally {
            lock.unlock();
        }
    }

    private List<String> awaitKeys(List<String> keys, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, timeoutMs));
        lock.lock();
        try {
            while (true) {
                List<String> missing = keys.stream().filter(k -> !values.containsKey(k)).toList();
                long left = deadline - System.nanoTime();
                if (missing.isEmpty() || left <= 0 || closed) {
                    return missing;
                }
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    private static long parseCounter(String key, byte[] value) throws BadRequest {
        String s = new String(value, StandardCharsets.UTF_8);
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new BadRequest("add on key " + Quoted.of(key) + " whose value " + Quoted.of(s) + " is not a counter");
        }
    }

    private static String readKey(DataInputStream in) throws IOException {
        return new String(readField(in), StandardCharsets.UTF_8);
    }

    static byte[] readField(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > StoreProtocol.MAX_FIELD_BYTES) {
            throw new BadRequest("field length " + n + " outside 0.." + StoreProtocol.MAX_FIELD_BYTES);
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    static void writeField(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing; nothing to do
        }
        try {
            // once the accept loop has stopped, no connection can reach this store any more
            acceptThread.join(HELLO_TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Socket s : clients) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing; nothing to do
            }
        }
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** A request that breaks the protocol; the connection is dropped. */
    private static final class BadRequest extends IOException {
        BadRequest(String message) {
            super(message);
        }
    }
}
