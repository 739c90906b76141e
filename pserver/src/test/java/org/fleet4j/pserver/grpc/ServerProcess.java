package org.fleet4j.pserver.grpc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/** A parameter server in a JVM of its own (the test's class path), to be killed with SIGKILL. */
public final class ServerProcess implements AutoCloseable {
    private static final String READY = "serving on ";

    private final Process process;
    private final String endpoint;

    private ServerProcess(Process process, String endpoint) {
        this.process = process;
        this.endpoint = endpoint;
    }

    /**
     * Serves {@link Shards#shard()} over protocol {@code args[0]} (grpc when absent) on a free loopback port with
     * the token in FLEET_JOB_TOKEN, until killed.
     */
    public static void main(String[] args) throws InterruptedException {
        JobToken token = JobToken.of(System.getenv(JobToken.ENV), JobToken.ENV);
        PsTransport transport = PsTransport.forProtocol(args.length == 0 ? "grpc" : args[0]);
        try (PsServer server = transport.serve(Shards.shard(), Shards.options(token))) {
            System.out.println(READY + server.endpoint());
            server.awaitStop(Duration.ofMinutes(5));
        }
    }

    static ServerProcess start(JobToken token) throws Exception {
        return start(token, "grpc", Map.of());
    }

    static ServerProcess start(JobToken token, String protocol) throws Exception {
        return start(token, protocol, Map.of());
    }

    /**
     * A server of {@code protocol} with {@code env} added to its environment; its first line that starts with
     * {@code serving on } gives its endpoint.
     */
    public static ServerProcess start(JobToken token, String protocol, Map<String, String> env) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--add-modules=jdk.incubator.vector", "-cp", System.getProperty("java.class.path"),
                ServerProcess.class.getName(), protocol)).redirectErrorStream(true);
        pb.environment().put(JobToken.ENV, token.text());
        pb.environment().putAll(env);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.startsWith(READY)) {
                        return line.substring(READY.length());
                    }
                }
                return null;
            } catch (IOException e) {
                return null;
            }
        });
        String endpoint;
        try {
            endpoint = ready.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IllegalStateException("the server process did not say '" + READY + "' within 60 s", e);
        }
        if (endpoint == null) {
            p.destroyForcibly();
            throw new IllegalStateException("the server process ended before serving (exit " + p.waitFor() + ")");
        }
        return new ServerProcess(p, endpoint);
    }

    public String endpoint() {
        return endpoint;
    }

    /** Sends {@code signal} (e.g. STOP: the process hangs with its sockets open). */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
        }
    }

    /** SIGKILL, and waits until the process is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
