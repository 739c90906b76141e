package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsEndpointTest {
    @TempDir
    Path work;

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            return client.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void getMetricsAnswersWithTheTextOfThatMomentOnTheLoopbackOnly() throws Exception {
        AtomicInteger scrapes = new AtomicInteger();
        try (MetricsEndpoint endpoint = MetricsEndpoint.open("127.0.0.1", 0,
                () -> "fleet_rank_up{rank=\"0\"} " + scrapes.incrementAndGet() + "\n")) {
            assertEquals(InetAddress.getByName("127.0.0.1"), endpoint.address().getAddress());
            URI uri = URI.create(endpoint.url());
            assertEquals("http://127.0.0.1:" + endpoint.address().getPort() + "/metrics", uri.toString());
            HttpResponse<String> first = send(HttpRequest.newBuilder(uri));
            assertEquals(200, first.statusCode());
            assertEquals("text/plain; version=0.0.4; charset=utf-8", first.headers().firstValue("Content-Type").orElseThrow());
            assertEquals("fleet_rank_up{rank=\"0\"} 1\n", first.body());
            assertEquals("fleet_rank_up{rank=\"0\"} 2\n", send(HttpRequest.newBuilder(uri)).body());
            assertEquals(404, send(HttpRequest.newBuilder(uri.resolve("/other"))).statusCode());
            assertEquals(405, send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString("x"))).statusCode());
        }
    }

    @Test
    void aTakenPortIsOneLineNamingItAndExitCode2BeforeAnyRankStarts() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = FleetRun.run(new String[]{"--metrics_port", "" + port, "--log_dir", work.resolve("log").toString(),
                    RoleProbe.class.getName()}, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            String message = err.toString(StandardCharsets.UTF_8);
            assertEquals(2, code, message);
            assertTrue(message.startsWith("fleetrun: --metrics_port " + port + ": cannot listen on 127.0.0.1:" + port
                    + " (Address already in use); another program or job holds it"), message);
            assertEquals(1, message.lines().count(), message);
            assertEquals("", out.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void aPortOutOfRangeOrAnUnknownHostIsRefused() {
        assertEquals("--metrics_port 70000: expected a port from 1 to 65535 (or 0 for any free one)",
                assertThrows(LaunchException.class, () -> MetricsEndpoint.open("127.0.0.1", 70000, () -> "")).getMessage());
        assertTrue(assertThrows(LaunchException.class, () -> MetricsEndpoint.open("[::1", 9100, () -> ""))
                .getMessage().startsWith("--metrics_host [::1: not an address of this machine"));
    }
}
