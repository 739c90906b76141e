package org.fleet4j.collective.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.cluster.WarningCounter;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.GroupContext;
import org.junit.jupiter.api.Test;

/**
 * A stranger who knows the job id, the store's port and a rank's data port, but not the job token, over real
 * loopback sockets: it reads no value and changes nothing in the store, and cannot take a rank's place on a data
 * port; the job carries on.
 */
class TokenlessClientTest {
    private static final Duration T = Duration.ofSeconds(30);
    private static final String ENDPOINT = "10.9.8.7:4242";

    @Test
    void aClientWithTheJobIdButNotTheTokenGetsNothingFromTheStoreAndChangesNothing() throws Exception {
        String job = "job-" + System.nanoTime();
        JobToken token = JobToken.random();
        try (TcpStore store = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), job, token, T)) {
            store.setString("endpoint/0", ENDPOINT);
            byte[] answer = speakTheStoreProtocolWithoutTheToken(store.hostedPort(), job);
            assertFalse(new String(answer, StandardCharsets.ISO_8859_1).contains(ENDPOINT),
                    "the store sent a value to a client without the token");
            CollectiveException refused = assertThrows(CollectiveException.class,
                    () -> TcpStore.connect("127.0.0.1", store.hostedPort(), job, JobToken.random(), T));
            assertTrue(refused.getMessage().contains("does not hold this job's token"), refused.getMessage());
            assertEquals(ENDPOINT, store.getString("endpoint/0", T), "a client without the token overwrote a key");
            assertThrows(CollectiveException.class, () -> store.get("planted", Duration.ofMillis(200)),
                    "a client without the token planted a key");
        }
    }

    @Test
    void aClientWithoutTheTokenCannotTakeARanksPlaceOnADataPort() throws Exception {
        String job = "job-" + System.nanoTime();
        JobToken token = JobToken.random();
        GroupOptions options = GroupOptions.defaults().withTimeout(T).withBackend(Backend.TCP);
        int[] ranks = {0, 1};
        String[] hosts = {"host-0", "host-1"};
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (TcpStore store0 = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), job, token, T);
             TcpStore store1 = TcpStore.connect("127.0.0.1", store0.hostedPort(), job, token, T);
             Arena arena = Arena.ofShared()) {
            Future<TcpProcessGroup> rank0 = pool.submit(() -> new TcpProcessGroup(
                    new GroupContext(job, "default", 0, ranks, hosts, store0, token, "127.0.0.1", options)));
            String endpoint = store1.getString("g/default/tcp/0", T);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));

            GroupContext impostor = new GroupContext(job, "default", 1, ranks, hosts, store1, JobToken.random(), "127.0.0.1", options);
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                s.setSoTimeout(15_000);
                assertThrows(IOException.class, () -> TcpListener.introduce(s.getInputStream(), s.getOutputStream(), impostor, 0),
                        "rank 0 admitted a connection that does not hold the job token");
                assertEquals(-1, s.getInputStream().read(), "rank 0 sent data to a connection without the token");
            }

            Future<TcpProcessGroup> rank1 = pool.submit(() -> new TcpProcessGroup(
                    new GroupContext(job, "default", 1, ranks, hosts, store1, token, "127.0.0.1", options)));
            try (TcpProcessGroup g0 = rank0.get(60, TimeUnit.SECONDS); TcpProcessGroup g1 = rank1.get(60, TimeUnit.SECONDS)) {
                MemorySegment a = ones(arena, 1f);
                MemorySegment b = ones(arena, 2f);
                Future<?> sum1 = pool.submit(() -> g1.allreduce(b, DataType.F32, ReduceOp.SUM).await(T));
                g0.allreduce(a, DataType.F32, ReduceOp.SUM).await(T);
                sum1.get(60, TimeUnit.SECONDS);
                assertEquals(3f, a.getAtIndex(ValueLayout.JAVA_FLOAT, 7));
                assertEquals(3f, b.getAtIndex(ValueLayout.JAVA_FLOAT, 7));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A script hammering a data port (junk, resets) writes a few warnings, not one per connection; the job carries on. */
    @Test
    void aFloodOnADataPortWritesOnlyAFewWarnings() throws Exception {
        try (WarningCounter warnings = new WarningCounter(TcpListener.class);
             TcpWorld w = new TcpWorld(2, 64 << 10); Arena arena = Arena.ofShared()) {
            String endpoint = w.stores.get(0).getString("g/default/tcp/0", T);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            for (int i = 0; i < 200; i++) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                    s.setSoTimeout(15_000);
                    if (i % 2 == 0) {
                        s.setSoLinger(true, 0); // close with a reset, before or while the challenge goes out
                        continue;
                    }
                    s.getOutputStream().write(new byte[] {0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8});
                    s.getInputStream().readAllBytes(); // until the listener closes the connection
                }
            }
            assertTrue(warnings.count() <= 11, warnings.count() + " warnings for 200 rejected connections");
            w.run((rank, g) -> {
                MemorySegment buf = ones(arena, rank + 1f);
                g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                assertEquals(3f, buf.getAtIndex(ValueLayout.JAVA_FLOAT, 5));
            });
        }
    }

    /**
     * Says hello with the job id alone, then asks for a key, overwrites it and plants another, all in one go, the
     * way any script could; returns every byte the store sent back before it closed the connection.
     */
    private static byte[] speakTheStoreProtocolWithoutTheToken(int port, String job) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(request);
        int magic = 0x464C5354;
        out.writeInt(magic);
        out.writeByte(1); // hello
        field(out, job);
        out.writeInt(magic);
        out.writeByte(3); // get
        field(out, "endpoint/0");
        out.writeLong(0);
        out.writeInt(magic);
        out.writeByte(2); // set
        field(out, "endpoint/0");
        field(out, "evil");
        out.writeInt(magic);
        out.writeByte(2); // set
        field(out, "planted");
        field(out, "1");
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(15_000);
            s.getOutputStream().write(request.toByteArray());
            s.getOutputStream().flush();
            s.shutdownOutput();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    answer.write(buffer, 0, n);
                }
            } catch (SocketException reset) {
                // the store closed on request bytes it never read; what it sent before that is what counts
            }
            return answer.toByteArray();
        }
    }

    private static void field(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static MemorySegment ones(Arena arena, float value) {
        MemorySegment m = arena.allocate(64 * 4, 64);
        for (int i = 0; i < 64; i++) {
            m.setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
        }
        return m;
    }
}
