package org.fleet4j.collective;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;

/**
 * Starts one JVM per rank the way the launcher does: the current java, the test classpath, the Fleet4J JVM flags,
 * and the FLEET_* role variables; each rank's output goes to its own log file. Closing kills every rank that is
 * still running, so a failing test leaves no process behind.
 */
public final class RankProcesses implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> logs = new ArrayList<>();

    /**
     * @param nodeOf node rank of each rank (same node = same host for locality); null: all on node 0
     * @param prefix  command words before the main class (e.g. {@code ip netns exec ns0}) per rank; null: none
     */
    public RankProcesses(int world, Class<?> main, List<String> args, Map<String, String> extraEnv, Path logDir, int[] nodeOf,
                  List<List<String>> prefix, String[] hosts) throws IOException {
        String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        int port = FreePorts.one();
        Files.createDirectories(logDir);
        String job = "proc-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        String token = JobToken.random().text();
        try {
            for (int r = 0; r < world; r++) {
                List<String> cmd = new ArrayList<>();
                if (prefix != null) {
                    cmd.addAll(prefix.get(r));
                }
                cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
                        "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                        main.getName()));
                cmd.addAll(args);
                ProcessBuilder pb = new ProcessBuilder(cmd);
                int node = nodeOf == null ? 0 : nodeOf[r];
                int localWorld = 0;
                int localRank = 0;
                for (int q = 0; q < world; q++) {
                    int qNode = nodeOf == null ? 0 : nodeOf[q];
                    if (qNode == node) {
                        if (q < r) {
                            localRank++;
                        }
                        localWorld++;
                    }
                }
                String masterHost = hosts == null ? "127.0.0.1" : hosts[0];
                Map<String, String> env = new HashMap<>(Map.of(
                        "FLEET_RANK", Integer.toString(r),
                        "FLEET_WORLD_SIZE", Integer.toString(world),
                        "FLEET_LOCAL_RANK", Integer.toString(localRank),
                        "FLEET_LOCAL_WORLD_SIZE", Integer.toString(localWorld),
                        "FLEET_NODE_RANK", Integer.toString(node),
                        "FLEET_MASTER", masterHost + ":" + port,
                        "FLEET_HOST", hosts == null ? "127.0.0.1" : hosts[r],
                        "FLEET_JOB_ID", job,
                        "FLEET_LOG_DIR", logDir.toString()));
                env.put(JobToken.ENV, token);
                env.putAll(extraEnv);
                pb.environment().putAll(env);
                Path log = logDir.resolve("rank-" + r + ".log");
                pb.redirectErrorStream(true).redirectOutput(log.toFile());
                logs.add(log);
                processes.add(pb.start());
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    public RankProcesses(int world, Class<?> main, List<String> args, Map<String, String> extraEnv, Path logDir) throws IOException {
        this(world, main, args, extraEnv, logDir, null, null, null);
    }

    public Process process(int rank) {
        return processes.get(rank);
    }

    /** Exit code of {@code rank}, failing the test (with the rank's log) if it is still running after {@code limit}. */
    public int exitCode(int rank, Duration limit) throws Exception {
        Process p = processes.get(rank);
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("rank " + rank + " still running after " + limit.toMillis() + " ms; log:\n" + log(rank));
        }
        return p.exitValue();
    }

    public String log(int rank) throws IOException {
        return Files.readString(logs.get(rank));
    }

    /** Waits (with a limit) until the rank's log contains {@code text}: the rank reached that point. */
    public void awaitLog(int rank, String text, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!log(rank).contains(text)) {
            if (!processes.get(rank).isAlive() && !log(rank).contains(text)) {
                throw new AssertionError("rank " + rank + " exited before printing '" + text + "'; log:\n" + log(rank));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("rank " + rank + " did not print '" + text + "' within " + limit.toMillis() + " ms; log:\n" + log(rank));
            }
            Thread.onSpinWait();
            Thread.sleep(20);
        }
    }

    /** kill -9 of the rank (and of its children, when a wrapper such as {@code ip netns exec} forked it). */
    public void kill(int rank) throws InterruptedException {
        Process p = processes.get(rank);
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor();
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
