package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One {@code bin/fleetrun PROGRAM ...} per simulated pod or task, each with exactly the variables its scheduler would
 * give it (and the job token its Secret would), nothing of the test's own scheduler variables, and the scheduler's
 * host names resolvable through the JVM's hosts file ({@code -Djdk.net.hosts.file}, passed to every JVM of the job in
 * JAVA_TOOL_OPTIONS). Launcher i writes WORK/podI.out, .err and its logs to WORK/podI/.
 */
final class PodLaunchers {
    static final Path FLEETRUN = Path.of("").toAbsolutePath().getParent().resolve("bin/fleetrun");
    /** Variables of schedulers and launchers that must not leak from the test's own environment into a pod's. */
    private static final List<String> SCHEDULER_PREFIXES = List.of("FLEET_", "PADDLE_", "PET_", "SLURM_", "OMPI_", "PMI_",
            "MPI_", "VC_", "VK_", "JOB", "TORCHELASTIC_", "MASTER_", "JAVA_TOOL_OPTIONS", "CLASSPATH");
    private static final List<String> SCHEDULER_NAMES = List.of("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
            "GROUP_RANK", "TRAINING_ROLE", "POD_IP", "HOSTNAME", "REPLICATED_JOB_NAME", "REPLICATED_JOB_REPLICAS",
            "PODS_PER_JOB");

    private PodLaunchers() {
    }

    /** A hosts file mapping each name to 127.0.0.1, with this machine's own names, for JAVA_TOOL_OPTIONS. */
    static Path hostsFile(Path dir, List<String> names) throws IOException {
        List<String> lines = new ArrayList<>(List.of("127.0.0.1 localhost " + InetAddress.getLocalHost().getHostName()));
        names.forEach(n -> lines.add("127.0.0.1 " + n));
        return Files.write(dir.resolve("hosts"), lines);
    }

    /**
     * Starts {@code bin/fleetrun ARGS} once per entry of {@code pods}, with that pod's variables, waits for all within
     * {@code timeout} and checks each exits 0; on a timeout every launcher and its ranks are killed.
     *
     * @param command the launcher's words for pod i (its --log_dir, the program and its arguments)
     */
    static void run(Path work, List<Map<String, String>> pods, Path hosts, String token, Function<Integer, List<String>> command,
                    Duration timeout) throws IOException, InterruptedException {
        List<Process> launchers = new ArrayList<>();
        try {
            for (int i = 0; i < pods.size(); i++) {
                List<String> cmd = new ArrayList<>(List.of(FLEETRUN.toString()));
                cmd.addAll(command.apply(i));
                ProcessBuilder b = new ProcessBuilder(cmd).directory(work.toFile())
                        .redirectOutput(work.resolve("pod" + i + ".out").toFile())
                        .redirectError(work.resolve("pod" + i + ".err").toFile());
                b.environment().keySet().removeIf(k -> SCHEDULER_PREFIXES.stream().anyMatch(k::startsWith)
                        || SCHEDULER_NAMES.contains(k));
                b.environment().put("JAVA_HOME", System.getProperty("java.home"));
                b.environment().put("JAVA_TOOL_OPTIONS", "-Djdk.net.hosts.file=" + hosts);
                b.environment().put("FLEET_JOB_TOKEN", token);
                b.environment().putAll(pods.get(i));
                Process p = b.start();
                p.getOutputStream().close();
                launchers.add(p);
            }
            for (int i = 0; i < launchers.size(); i++) {
                Process p = launchers.get(i);
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new AssertionError("pod " + i + "'s fleetrun still ran after " + timeout + "\n" + TwoHostNetwork.logs(work));
                }
                assertEquals(0, p.exitValue(), "pod " + i + "'s fleetrun\n" + TwoHostNetwork.logs(work));
            }
        } finally {
            for (Process p : launchers) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    /** The launcher words of a pod: its own log folder, small JVMs, then mnist and its arguments. */
    static List<String> mnist(Path work, int pod, List<String> mnistArgs) {
        List<String> cmd = new ArrayList<>(List.of("--log_dir", work.resolve("pod" + pod).toString(), "--jvm_args",
                "-XX:+UseSerialGC -Xmx512m", "mnist"));
        cmd.addAll(mnistArgs);
        return cmd;
    }
}
