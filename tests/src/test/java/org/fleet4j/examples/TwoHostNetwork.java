package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Assumptions;

/**
 * Two "hosts" on this machine: network namespaces joined by a veth pair, host i at 10.250.N.(i+1)/24, named after
 * this JVM's pid so concurrent test runs do not collide. Needs root and iproute2; {@link #close} removes both.
 */
final class TwoHostNetwork implements AutoCloseable {
    private final String[] namespaces;
    private final String[] addresses;

    private TwoHostNetwork(String[] namespaces, String[] addresses) {
        this.namespaces = namespaces;
        this.addresses = addresses;
    }

    /** Makes the namespaces and the link; on failure removes what it made and throws saying which command failed. */
    static TwoHostNetwork create() throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        String[] ns = {"fleet4j-h" + pid + "-0", "fleet4j-h" + pid + "-1"};
        String subnet = "10.250." + pid % 250 + ".";
        String[] ip = {subnet + "1", subnet + "2"};
        String[] veth = {"f4h" + pid % 100000 + "a", "f4h" + pid % 100000 + "b"};
        TwoHostNetwork net = new TwoHostNetwork(ns, ip);
        try {
            sh("ip", "netns", "add", ns[0]);
            sh("ip", "netns", "add", ns[1]);
            sh("ip", "link", "add", veth[0], "type", "veth", "peer", "name", veth[1]);
            for (int i = 0; i < 2; i++) {
                sh("ip", "link", "set", veth[i], "netns", ns[i]);
                sh("ip", "-n", ns[i], "addr", "add", ip[i] + "/24", "dev", veth[i]);
                sh("ip", "-n", ns[i], "link", "set", veth[i], "up");
                sh("ip", "-n", ns[i], "link", "set", "lo", "up");
            }
            return net;
        } catch (IOException | InterruptedException | RuntimeException e) {
            net.close();
            throw e;
        }
    }

    /**
     * {@link #create}, or the test skipped where namespaces cannot be made without root; root can make them (iproute2
     * is installed by scripts/install-deps.sh), so there a failure is a failure.
     */
    static TwoHostNetwork createOrSkip() throws InterruptedException {
        try {
            return create();
        } catch (IOException e) {
            if ("root".equals(System.getProperty("user.name"))) {
                throw new AssertionError("root could not make network namespaces", e);
            }
            Assumptions.abort("network namespaces need root (" + e.getMessage() + "); two-host test skipped");
            throw new AssertionError("unreachable: Assumptions.abort throws");
        }
    }

    /**
     * Runs {@code command.apply(host)} (a bin/fleetrun line) inside each host at once, with this JVM's JDK and the
     * job token both launchers' processes must share, output to WORK/launcherH.out and .err, and waits for both to
     * exit 0 within {@code timeout}; on a timeout both are killed with their processes. Failures carry {@code logs}.
     */
    void runLaunchers(Path work, IntFunction<List<String>> command, String token, Duration timeout,
                      Supplier<String> logs) throws IOException, InterruptedException {
        runLaunchers(work, command, host -> Map.of(), token, timeout, logs);
    }

    /** As {@link #runLaunchers(Path, IntFunction, String, Duration, Supplier)}, host i's launcher with {@code env.apply(i)}. */
    void runLaunchers(Path work, IntFunction<List<String>> command, IntFunction<Map<String, String>> env, String token,
                      Duration timeout, Supplier<String> logs) throws IOException, InterruptedException {
        List<Process> launchers = new ArrayList<>();
        for (int host = 0; host < 2; host++) {
            ProcessBuilder b = new ProcessBuilder(inHost(host, command.apply(host))).directory(work.toFile())
                    .redirectOutput(work.resolve("launcher" + host + ".out").toFile())
                    .redirectError(work.resolve("launcher" + host + ".err").toFile());
            b.environment().put("JAVA_HOME", System.getProperty("java.home"));
            b.environment().remove("CLASSPATH");
            b.environment().put(JobToken.ENV, token);
            b.environment().putAll(env.apply(host));
            launchers.add(b.start());
        }
        for (int host = 0; host < 2; host++) {
            Process p = launchers.get(host);
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                launchers.forEach(l -> {
                    l.descendants().forEach(ProcessHandle::destroyForcibly);
                    l.destroyForcibly();
                });
                throw new AssertionError("the launcher on host " + host + " still ran after " + timeout + "\n"
                        + logs.get());
            }
            assertEquals(0, p.exitValue(), "launcher on host " + host + "\n" + logs.get());
        }
    }

    /** Every text file under {@code work} (logs, summaries), for a failure's message; binary outputs left out. */
    static String logs(Path work) {
        StringBuilder s = new StringBuilder();
        try (var files = Files.walk(work)) {
            for (Path f : files.filter(Files::isRegularFile).filter(TwoHostNetwork::isText).sorted().toList()) {
                s.append("--- ").append(work.relativize(f)).append(":\n").append(Files.readString(f))
                        .append('\n');
            }
        } catch (IOException | UncheckedIOException e) {
            s.append("(could not read every log under ").append(work).append(": ").append(e.getMessage()).append(')');
        }
        return s.toString();
    }

    private static boolean isText(Path f) {
        String name = f.getFileName().toString();
        return !name.endsWith(".png") && !name.endsWith(".safetensors") && !name.endsWith(".jar");
    }

    String address(int host) {
        return addresses[host];
    }

    /**
     * Makes {@code names} (each to the address of the host it maps to) resolvable inside both hosts, as a cluster's DNS
     * would: {@code ip netns exec} binds /etc/netns/NAMESPACE/hosts over /etc/hosts. {@link #close} removes them.
     */
    void resolve(Map<String, Integer> names) throws IOException {
        for (String ns : namespaces) {
            Path dir = Files.createDirectories(Path.of("/etc/netns", ns));
            List<String> lines = new ArrayList<>(List.of("127.0.0.1 localhost"));
            names.forEach((name, host) -> lines.add(addresses[host] + " " + name));
            Files.write(dir.resolve("hosts"), lines);
        }
    }

    /** {@code command} to run inside host {@code host}'s namespace. */
    List<String> inHost(int host, List<String> command) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", namespaces[host]));
        c.addAll(command);
        return c;
    }

    /** Deletes both namespaces (the veth pair goes with them); ones never made are passed over. */
    @Override
    public void close() {
        for (String ns : namespaces) {
            Path dir = Path.of("/etc/netns", ns);
            try {
                Files.deleteIfExists(dir.resolve("hosts"));
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                // nothing was written there, or it is gone already
            }
            try {
                sh("ip", "netns", "del", ns);
            } catch (IOException | InterruptedException e) {
                // never created; nothing to remove
            }
        }
    }

    private static void sh(String... cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("cannot run " + cmd[0] + ": " + e.getMessage(), e);
        }
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish within 20 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + out);
        }
    }
}
