package org.fleet4j.launch;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * {@code fleetrun --metrics_port}: an HTTP server (the JDK's) that answers {@code GET /metrics} with the text that
 * {@code body} gives at that moment, in Prometheus's text exposition format. One daemon thread serves the requests,
 * one at a time; the job never waits for it.
 */
final class MetricsEndpoint implements AutoCloseable {
    static final String PATH = "/metrics";
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService thread;

    private MetricsEndpoint(HttpServer server, ExecutorService thread) {
        this.server = server;
        this.thread = thread;
    }

    /** Listens on {@code host:port} (port 0: any free one); a taken port or an unknown host is the user's error. */
    static MetricsEndpoint open(String host, int port, Supplier<String> body) {
        if (port < 0 || port > 65535) {
            throw new LaunchException("--metrics_port " + port + ": expected a port from 1 to 65535 (or 0 for any free one)");
        }
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new LaunchException("--metrics_host " + host + ": not an address of this machine (" + e.getMessage() + ")", e);
        }
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (BindException e) {
            throw new LaunchException("--metrics_port " + port + ": cannot listen on " + host + ":" + port + " ("
                    + e.getMessage() + "); another program or job holds it, or " + host
                    + " is not an address of this machine; choose another port", e);
        } catch (IOException e) {
            throw new LaunchException("--metrics_port " + port + ": cannot listen on " + host + ":" + port + " (" + e + ")", e);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("fleetrun-metrics").factory());
        server.setExecutor(thread);
        server.createContext("/", exchange -> answer(exchange, body));
        server.start();
        return new MetricsEndpoint(server, thread);
    }

    private static void answer(HttpExchange exchange, Supplier<String> body) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                send(exchange, 404, "text/plain; charset=utf-8", "not found: the metrics are at " + PATH + "\n", method);
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, 405, "text/plain; charset=utf-8", PATH + " answers GET and HEAD\n", method);
            } else {
                send(exchange, 200, CONTENT_TYPE, body.get(), method);
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String text, String method) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        boolean head = method.equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** The address it listens on (the port chosen, when 0 was asked). */
    InetSocketAddress address() {
        return server.getAddress();
    }

    /** The URL a scraper reads. */
    String url() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + PATH;
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
