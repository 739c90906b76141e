package org.fleet4j.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.fleet4j.collective.CollectiveException;
import org.junit.jupiter.api.Test;

/** The rendezvous store over real sockets: set/get/wait/add/compare-and-set, timeouts and job checks. */
class StoreTest {
    private static final Duration T = Duration.ofSeconds(10);
    private static final JobToken TOKEN = JobToken.random();

    @Test
    void keysCountersAndCompareAndSet() {
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job-a", TOKEN, T);
             TcpStore other = TcpStore.connect("127.0.0.1", host.hostedPort(), "job-a", TOKEN, T)) {
            CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> other.getString("endpoint/1", T));
            host.setString("endpoint/1", "10.0.0.2:4000");
            assertEquals("10.0.0.2:4000", waiting.join());
            assertEquals(1, host.add("arrived", 1));
            assertEquals(3, other.add("arrived", 2));
            assertArrayEquals(bytes("first"), host.compareAndSet("id", null, bytes("first")), "absent-expected wins on an absent key");
            assertArrayEquals(bytes("first"), other.compareAndSet("id", null, bytes("second")), "absent-expected loses once set");
            assertArrayEquals(bytes("third"), other.compareAndSet("id", bytes("first"), bytes("third")));
            other.setString("k2", "v");
            host.waitFor(List.of("endpoint/1", "k2"), T);
        }
    }

    @Test
    void timeoutsNameTheMissingKeys() {
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job-b", TOKEN, T)) {
            CollectiveException e = assertThrows(CollectiveException.class, () -> host.get("never", Duration.ofMillis(200)));
            assertTrue(e.getMessage().contains("'never'"), e.getMessage());
            host.setString("here", "1");
            e = assertThrows(CollectiveException.class, () -> host.waitFor(List.of("here", "gone"), Duration.ofMillis(200)));
            assertTrue(e.getMessage().contains("[gone]"), e.getMessage());
        }
    }

    @Test
    void anotherJobIsRejectedAndAMissingStoreIsReported() {
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job-c", TOKEN, T)) {
            CollectiveException e = assertThrows(CollectiveException.class,
                    () -> TcpStore.connect("127.0.0.1", host.hostedPort(), "job-other", TOKEN, T));
            assertTrue(e.getMessage().contains("job-other"), e.getMessage());
            int port = host.hostedPort();
            host.close();
            e = assertThrows(CollectiveException.class, () -> TcpStore.connect("127.0.0.1", port, "job-c", TOKEN, Duration.ofMillis(300)));
            assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
        }
    }

    /** A script hammering the store with junk must not fill rank 0's console: a few lines, then a count. */
    @Test
    void aFloodOfRejectedConnectionsWritesOnlyAFewWarnings() throws IOException {
        try (WarningCounter warnings = new WarningCounter(StoreServer.class);
             TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job-f", TOKEN, T)) {
            for (int i = 0; i < 200; i++) {
                try (Socket s = new Socket("127.0.0.1", host.hostedPort())) {
                    s.setSoTimeout(10_000);
                    s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    InputStream in = s.getInputStream();
                    // the store answers REJECTED after logging the rejection, then closes
                    assertEquals(2, in.read(), "rejection " + i);
                }
            }
            assertTrue(warnings.count() >= 1 && warnings.count() <= 11, warnings.count() + " warnings for 200 rejected connections");
            host.setString("still", "serving");
            assertEquals("serving", host.getString("still", T));
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
