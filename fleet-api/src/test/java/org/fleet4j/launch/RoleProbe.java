package org.fleet4j.launch;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Properties;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.role.EnvironmentRoleMaker;

/**
 * A rank program for the launcher tests. It records its PID, role environment and arguments under
 * PROBE_DIR, then behaves as PROBE_* variables say: fail on one rank (exit code or exception), wait
 * for a release file, start a child process. Started as a parameter server (TRAINING_ROLE=PSERVER) it records
 * itself as server-N and serves until stopped, or exits with PROBE_SERVER_FAIL=exit:N once the ranks are up.
 */
public final class RoleProbe {
    private static final long WAIT_MILLIS = 60_000;

    private RoleProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(required("PROBE_DIR"));
        if ("PSERVER".equals(System.getenv("TRAINING_ROLE"))) {
            serve(dir, args);
            return;
        }
        String rank = required("FLEET_RANK");
        int world = Integer.parseInt(required("FLEET_WORLD_SIZE"));
        if (System.getenv("PROBE_CHILD") != null) {
            Process child = new ProcessBuilder("sleep", "300").start();
            writeAtomically(dir.resolve("rank-" + rank + ".child.pid"), Long.toString(child.pid()));
        }
        writeAtomically(dir.resolve("rank-" + rank + ".role"), describe(args));
        System.out.println("hello from rank " + rank + " of " + world);
        System.err.println("rank " + rank + " writes to stderr too");
        // Last: tests take the PID file as the sign that everything above has happened.
        writeAtomically(dir.resolve("rank-" + rank + ".pid"), Long.toString(ProcessHandle.current().pid()));

        if (rank.equals(System.getenv("PROBE_FAIL_RANK"))) {
            for (int r = 0; r < world; r++) {
                awaitFile(dir.resolve("rank-" + r + ".pid"));
            }
            String mode = System.getenv().getOrDefault("PROBE_FAIL_MODE", "throw");
            if (mode.startsWith("exit:")) {
                System.exit(Integer.parseInt(mode.substring("exit:".length())));
            }
            throw new IllegalStateException("probe failure on purpose in rank " + rank);
        }
        if (System.getenv("PROBE_WAIT") != null) {
            awaitFile(dir.resolve("release"));
        }
    }

    /** A parameter server's part: its role as the role makers read it, then serving until the launcher stops it. */
    private static void serve(Path dir, String[] args) throws Exception {
        Role role = EnvironmentRoleMaker.fromSystem().role();
        String name = "server-" + role.serverIndex();
        writeAtomically(dir.resolve(name + ".role"), describe(args) + "role.describe=" + role.describe() + "\n");
        System.out.println("hello from server " + role.serverIndex() + " of " + role.serverNum() + " for " + role.workerNum()
                + " trainer(s)");
        writeAtomically(dir.resolve(name + ".pid"), Long.toString(ProcessHandle.current().pid()));
        String fail = System.getenv("PROBE_SERVER_FAIL");
        if (fail != null) {
            for (int r = 0; r < role.workerNum(); r++) {
                awaitFile(dir.resolve("rank-" + r + ".pid"));
            }
            System.exit(Integer.parseInt(fail.substring("exit:".length())));
        }
        // no one writes this file: the server runs until fleetrun stops it (or the wait's own timeout fails it)
        awaitFile(dir.resolve("servers-never-released"));
    }

    private static String describe(String[] args) throws IOException {
        Properties role = new Properties();
        for (Map.Entry<String, String> e : System.getenv().entrySet()) {
            if (e.getKey().startsWith("FLEET_") || e.getKey().startsWith("PADDLE_") || e.getKey().equals("TRAINING_ROLE")
                    || e.getKey().equals("POD_IP")) {
                role.setProperty("env." + e.getKey(), e.getValue());
            }
        }
        role.setProperty("args.count", Integer.toString(args.length));
        for (int i = 0; i < args.length; i++) {
            role.setProperty("args." + i, args[i]);
        }
        role.setProperty("property.probe.flag", System.getProperty("probe.flag", "<unset>"));
        role.setProperty("classpath", System.getProperty("java.class.path"));
        role.setProperty("cpus", threadCpus());
        var text = new java.io.StringWriter();
        role.store(text, null);
        return text.toString();
    }

    /** The distinct Cpus_allowed_list values of this JVM's threads, space separated ("0" when all are bound to CPU 0). */
    private static String threadCpus() throws IOException {
        java.util.TreeSet<String> lists = new java.util.TreeSet<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("Cpus_allowed_list:")) {
                            lists.add(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return String.join(" ", lists);
    }

    static void awaitFile(Path file) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (!Files.exists(file)) {
            if (System.currentTimeMillis() > deadline) {
                System.err.println("probe gave up waiting for " + file);
                System.exit(99);
            }
            Thread.sleep(20);
        }
    }

    private static String required(String name) {
        String value = System.getenv(name);
        if (value == null) {
            throw new IllegalStateException(name + " is not set");
        }
        return value;
    }

    /** Readers poll for these files, so they must never see one half written. */
    static void writeAtomically(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp)) {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }
}
