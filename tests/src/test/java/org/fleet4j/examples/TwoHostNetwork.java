package org.fleet4j.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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

    String address(int host) {
        return addresses[host];
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
