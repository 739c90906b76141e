package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher as users run it: a separate JVM that starts real rank JVMs running {@link RoleProbe}. */
class FleetRunProcessTest {
    /** Rank JVMs in tests only record their role, so a small quick-starting JVM is enough. */
    private static final String LIGHT_JVM = "-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx64m";
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(60);
    /** Failure and signal teardown must finish well within what users are promised. */
    private static final Duration TEARDOWN_TIMEOUT = Duration.ofSeconds(15);

    @TempDir
    Path work;
    private Path probeDir;
    private final Map<String, String> env = new HashMap<>();

    @BeforeEach
    void setUp() throws IOException {
        probeDir = Files.createDirectories(work.resolve("probe"));
        env.put("PROBE_DIR", probeDir.toString());
    }

    /** Every process a rank recorded must be gone: the launcher leaves nothing behind. */
    @AfterEach
    void noProcessOfTheJobIsLeft() throws IOException, InterruptedException {
        List<Long> alive = new ArrayList<>();
        try (Stream<Path> files = Files.list(probeDir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".pid")).toList()) {
                long pid = Long.parseLong(Files.readString(file).trim());
                if (!Await.gone(pid, Duration.ofSeconds(10))) {
                    alive.add(pid);
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        }
        assertEquals(List.of(), alive, "processes of the job still alive after the launcher exited");
    }

    private LauncherRun launch(String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("--jvm_args", LIGHT_JVM));
        all.addAll(List.of(args));
        return LauncherRun.javaMain(work, env, all);
    }

    private Properties role(int rank) throws IOException {
        Properties role = new Properties();
        role.load(new StringReader(Files.readString(probeDir.resolve("rank-" + rank + ".role"))));
        return role;
    }

    private long pid(String name, LauncherRun launcher) throws IOException, InterruptedException {
        return Long.parseLong(Await.file(probeDir.resolve(name), launcher).trim());
    }

    @Test
    void oneRankGetsItsRoleLogsAndEchoedOutput() throws Exception {
        LauncherRun launcher = launch("--nproc_per_node", "1", RoleProbe.class.getName());

        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        Properties role = role(0);
        assertEquals("0", role.getProperty("env.FLEET_RANK"));
        assertEquals("1", role.getProperty("env.FLEET_WORLD_SIZE"));
        assertEquals("0", role.getProperty("env.FLEET_LOCAL_RANK"));
        assertEquals("1", role.getProperty("env.FLEET_LOCAL_WORLD_SIZE"));
        assertEquals("0", role.getProperty("env.FLEET_NODE_RANK"));
        assertEquals("1", role.getProperty("env.FLEET_NNODES"));
        assertEquals("127.0.0.1", role.getProperty("env.FLEET_HOST"));
        assertEquals("default", role.getProperty("env.FLEET_JOB_ID"));
        assertEquals("info", role.getProperty("env.FLEET_LOG_LEVEL"));
        assertEquals(work.resolve("log").toString(), role.getProperty("env.FLEET_LOG_DIR"));
        String master = role.getProperty("env.FLEET_MASTER");
        assertTrue(master.matches("127\\.0\\.0\\.1:\\d+"), master);
        assertEquals(master, role.getProperty("env.PADDLE_CURRENT_ENDPOINT"), "rank 0 hosts the store at its endpoint");
        assertEquals(master, role.getProperty("env.PADDLE_TRAINER_ENDPOINTS"));
        assertEquals("0", role.getProperty("env.PADDLE_TRAINER_ID"));
        assertEquals("1", role.getProperty("env.PADDLE_TRAINERS_NUM"));
        assertEquals("0", role.getProperty("env.PADDLE_RANK_IN_NODE"));
        assertEquals("TRAINER", role.getProperty("env.TRAINING_ROLE"));
        assertEquals("cpu", role.getProperty("env.FLEET_DEVICE"));
        assertEquals(null, role.getProperty("env.FLEET_DEVICE_ID"));
        assertEquals(null, role.getProperty("env.FLEET_STRATEGY"));

        assertTrue(launcher.stdout().contains("[rank 0] hello from rank 0 of 1\n"), launcher.stdout());
        assertTrue(launcher.stdout().contains("[rank 0] rank 0 writes to stderr too\n"), launcher.stdout());
        String log = Files.readString(work.resolve("log/workerlog.0"));
        assertTrue(log.contains("hello from rank 0 of 1\n") && log.contains("rank 0 writes to stderr too\n"), log);
        assertFalse(log.contains("[rank 0]"), "the log holds the rank's own output, unprefixed");
        String incubatorWarning = "WARNING: Using incubator modules: jdk.incubator.vector\n";
        assertTrue(log.contains(incubatorWarning), "the log keeps the JVM's warning: " + log);
        assertFalse(launcher.stdout().contains(incubatorWarning), "the console is spared it: " + launcher.stdout());
        String endpoints = Files.readString(work.resolve("log/endpoints.log"));
        assertTrue(endpoints.contains("master " + master + "\n") && endpoints.contains("rank 0 local_rank 0 " + master + "\n"), endpoints);
    }

    @Test
    void threeRanksGetDistinctRanksEndpointsAndDevices() throws Exception {
        int port = FreePorts.consecutive(3);
        Path strategy = Files.writeString(work.resolve("strategy.yaml"), "fuse_all_reduce_ops: true\n");
        env.put("FLEET_DEVICE_ID", "stale value from the launcher's own environment");
        // The launcher checks listed GPUs against the visible ones; these three exist as far as it can tell.
        env.put("CUDA_VISIBLE_DEVICES", "0,1,2");
        LauncherRun launcher = LauncherRun.javaMain(work, env, List.of(
                "--devices", "2,0,1", "--start_port", Integer.toString(port), "--job_id", "j7", "--log_dir", "logs/run1",
                "--log_level", "warn", "--strategy", "strategy.yaml", "--jvm_args", LIGHT_JVM + " -Dprobe.flag='a b'",
                RoleProbe.class.getName()));

        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        String all = "127.0.0.1:" + port + ",127.0.0.1:" + (port + 1) + ",127.0.0.1:" + (port + 2);
        List<String> deviceIds = List.of("2", "0", "1");
        for (int rank = 0; rank < 3; rank++) {
            Properties role = role(rank);
            assertEquals(Integer.toString(rank), role.getProperty("env.FLEET_RANK"));
            assertEquals(Integer.toString(rank), role.getProperty("env.FLEET_LOCAL_RANK"));
            assertEquals("3", role.getProperty("env.FLEET_WORLD_SIZE"));
            assertEquals("3", role.getProperty("env.FLEET_LOCAL_WORLD_SIZE"));
            assertEquals("127.0.0.1:" + port, role.getProperty("env.FLEET_MASTER"));
            assertEquals(all, role.getProperty("env.PADDLE_TRAINER_ENDPOINTS"));
            assertEquals("127.0.0.1:" + (port + rank), role.getProperty("env.PADDLE_CURRENT_ENDPOINT"));
            assertEquals(deviceIds.get(rank), role.getProperty("env.FLEET_DEVICE_ID"));
            assertEquals("gpu:" + deviceIds.get(rank), role.getProperty("env.FLEET_DEVICE"), "the form fleet-core's Devices reads");
            assertEquals("j7", role.getProperty("env.FLEET_JOB_ID"));
            assertEquals("warn", role.getProperty("env.FLEET_LOG_LEVEL"));
            assertEquals(strategy.toString(), role.getProperty("env.FLEET_STRATEGY"));
            assertEquals(work.resolve("logs/run1").toString(), role.getProperty("env.FLEET_LOG_DIR"));
            assertEquals("a b", role.getProperty("property.probe.flag"), "--jvm_args is split like a shell would");
            String log = Files.readString(work.resolve("logs/run1/workerlog." + rank));
            assertTrue(log.contains("hello from rank " + rank + " of 3\n"), log);
        }
        assertTrue(launcher.stdout().contains("[rank 0] hello from rank 0 of 3"), launcher.stdout());
        assertFalse(launcher.stdout().contains("hello from rank 1") || launcher.stdout().contains("hello from rank 2"),
                "only rank 0 is echoed: " + launcher.stdout());
        assertFalse(launcher.stderr().contains("fleetrun: job"), "--log_level warn silences the launcher's info lines");
        String endpoints = Files.readString(work.resolve("logs/run1/endpoints.log"));
        assertTrue(endpoints.contains("rank 2 local_rank 2 127.0.0.1:" + (port + 2) + " gpu 1\n"), endpoints);
    }

    @Test
    void programArgumentsPassThroughUntouched() throws Exception {
        List<String> programArgs = List.of("--nproc_per_node", "5", "--", "a b", "", "--log_level=debug", "ünïcode", "-x");
        List<String> args = new ArrayList<>(List.of(RoleProbe.class.getName()));
        args.addAll(programArgs);
        LauncherRun launcher = launch(args.toArray(String[]::new));

        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        Properties role = role(0);
        assertEquals("1", role.getProperty("env.FLEET_WORLD_SIZE"), "flags after PROGRAM are the program's");
        assertEquals(Integer.toString(programArgs.size()), role.getProperty("args.count"));
        for (int i = 0; i < programArgs.size(); i++) {
            assertEquals(programArgs.get(i), role.getProperty("args." + i));
        }
    }

    /**
     * By default two CPU ranks each get their own slice of the launcher's CPUs, every thread of their JVM from the
     * first; --cpu_bind none leaves them free; --cpu_bind cores refuses more ranks than CPUs, naming both counts.
     */
    @Test
    void ranksAreBoundToTheirOwnCpusUnlessToldNot() throws Exception {
        List<Integer> cpus = CpuBinding.allowedCpus();
        Assumptions.assumeTrue(cpus.size() >= 2, "binding 2 ranks needs 2 CPUs; this machine lets the tests use " + cpus);
        LauncherRun bound = launch("--nproc_per_node", "2", RoleProbe.class.getName());
        assertEquals(0, bound.awaitExit(JOB_TIMEOUT), bound.stderr());
        String first = CpuBinding.list(cpus.subList(0, cpus.size() / 2));
        String second = CpuBinding.list(cpus.subList(cpus.size() / 2, cpus.size()));
        assertEquals(first, role(0).getProperty("cpus"), "every thread of rank 0 on the first half of " + cpus);
        assertEquals(second, role(1).getProperty("cpus"), "every thread of rank 1 on the second half of " + cpus);
        assertTrue(bound.stderr().contains("fleetrun: ranks bound to CPUs " + first + " | " + second + " (--cpu_bind auto)"),
                bound.stderr());
        assertTrue(Files.readString(work.resolve("log/endpoints.log")).contains(" cpus " + second + "\n"));

        LauncherRun free = launch("--nproc_per_node", "2", "--cpu_bind", "none", "--log_dir", "free", RoleProbe.class.getName());
        assertEquals(0, free.awaitExit(JOB_TIMEOUT), free.stderr());
        for (int rank = 0; rank < 2; rank++) {
            assertEquals(CpuBinding.list(cpus), role(rank).getProperty("cpus"), "rank " + rank + " with --cpu_bind none");
        }

        String many = Integer.toString(cpus.size() + 1);
        LauncherRun refused = launch("--nproc_per_node", many, "--cpu_bind", "cores", RoleProbe.class.getName());
        assertEquals(2, refused.awaitExit(JOB_TIMEOUT), refused.stderr());
        assertTrue(refused.stderr().contains("--cpu_bind cores: cannot bind the ranks to CPUs: " + many + " ranks on "
                + cpus.size() + " CPU(s) " + CpuBinding.list(cpus) + ": binding needs at least one CPU per rank"), refused.stderr());
    }

    /** {@link ServerPlanLauncher}: the launcher's job supervision on a plan with parameter servers as well as ranks. */
    private LauncherRun launchWithServers(int ranks, int servers) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:+UseSerialGC", "-cp", LauncherRun.testClasspath(),
                ServerPlanLauncher.class.getName(), work.resolve("log").toString(), Integer.toString(ranks),
                Integer.toString(servers)));
        return LauncherRun.start(command, work, env);
    }

    @Test
    void parameterServersRunUntilTheLastRankFinishesThenAreStopped() throws Exception {
        env.put("PROBE_WAIT", "1");
        LauncherRun launcher = launchWithServers(2, 2);
        long server0 = pid("server-0.pid", launcher);
        long server1 = pid("server-1.pid", launcher);
        pid("rank-0.pid", launcher);
        pid("rank-1.pid", launcher);
        assertTrue(ProcessHandle.of(server0).map(ProcessHandle::isAlive).orElse(false), "server 0 serves while the ranks run");
        assertTrue(ProcessHandle.of(server1).map(ProcessHandle::isAlive).orElse(false), "server 1 serves while the ranks run");

        RoleProbe.writeAtomically(probeDir.resolve("release"), "go");
        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertTrue(Await.gone(server0, Duration.ZERO) && Await.gone(server1, Duration.ZERO), "the servers are stopped before fleetrun exits");
        assertTrue(launcher.stderr().contains("fleetrun: job ps-job: all 2 rank(s) finished; stopped 2 parameter server(s)"),
                launcher.stderr());

        Properties server = new Properties();
        server.load(new StringReader(Files.readString(probeDir.resolve("server-1.role"))));
        String list = server.getProperty("env.PADDLE_PSERVERS_IP_PORT_LIST");
        assertTrue(list.matches("127\\.0\\.0\\.1:\\d+,127\\.0\\.0\\.1:\\d+"), list);
        String own = list.split(",")[1];
        assertEquals("PSERVER", server.getProperty("env.TRAINING_ROLE"));
        assertEquals("127.0.0.1", server.getProperty("env.POD_IP"));
        assertEquals(own.substring(own.indexOf(':') + 1), server.getProperty("env.PADDLE_PORT"));
        assertEquals("2", server.getProperty("env.PADDLE_TRAINERS_NUM"));
        assertEquals("ps-job", server.getProperty("env.FLEET_JOB_ID"));
        assertEquals(null, server.getProperty("env.FLEET_RANK"), "a server is no rank of the trainers' world");
        assertEquals(null, server.getProperty("env.FLEET_WORLD_SIZE"));
        assertEquals("server 1 of 2 (" + own + ") for 2 trainer(s) from Paddle launcher", server.getProperty("role.describe"),
                "the role makers read what the launcher gave the server");

        Properties rank = role(1);
        assertEquals("TRAINER", rank.getProperty("env.TRAINING_ROLE"));
        assertEquals(list, rank.getProperty("env.PADDLE_PSERVERS_IP_PORT_LIST"));
        String dataPorts = String.join(",", Arrays.stream(list.split(",")).map(e -> e + "=127.0.0.1:"
                + (Integer.parseInt(e.substring(e.indexOf(':') + 1)) + 2)).toList());
        assertEquals(dataPorts, server.getProperty("env.FLEET_PS_ENDPOINT_MAP"), "each server's grpc++ data port:"
                + " the port 2 servers after its own");
        assertEquals(dataPorts, rank.getProperty("env.FLEET_PS_ENDPOINT_MAP"));
        assertEquals("1", rank.getProperty("env.FLEET_RANK"));

        assertTrue(Files.readString(work.resolve("log/serverlog.1")).contains("hello from server 1 of 2 for 2 trainer(s)\n"));
        assertTrue(Files.readString(work.resolve("log/workerlog.1")).contains("hello from rank 1 of 2\n"));
        assertTrue(launcher.stdout().contains("[rank 0] hello from rank 0 of 2\n"), launcher.stdout());
        assertFalse(launcher.stdout().contains("hello from server"), "only rank 0 is echoed: " + launcher.stdout());
        String endpoints = Files.readString(work.resolve("log/endpoints.log"));
        assertTrue(endpoints.contains("server 1 " + own + "\n") && endpoints.contains("PADDLE_PSERVERS_IP_PORT_LIST " + list + "\n"),
                endpoints);
        assertTrue(endpoints.contains("FLEET_PS_ENDPOINT_MAP " + dataPorts + " (grpc++ data ports"), endpoints);
    }

    @Test
    void aServerThatEndsWhileRanksRunFailsTheJob() throws Exception {
        env.put("PROBE_WAIT", "1");
        env.put("PROBE_SERVER_FAIL", "exit:0");
        LauncherRun launcher = launchWithServers(1, 1);
        long rank0 = pid("rank-0.pid", launcher);
        long server0 = pid("server-0.pid", launcher);

        assertEquals(ExitCodes.PEER_FAILED, launcher.awaitExit(TEARDOWN_TIMEOUT.plus(Duration.ofSeconds(10))), launcher.stderr());
        String err = launcher.stderr();
        assertTrue(err.contains("fleetrun: server 0 (pid " + server0 + ") exited with code 0 while 1 rank(s) still ran;"
                + " stopping the other 1 running rank(s)"), err);
        assertTrue(err.contains("last 20 lines of " + work.resolve("log/serverlog.0")), err);
        assertTrue(err.contains("fleetrun: job ps-job failed: server 0 exited with code 0 while 1 rank(s) still ran"), err);
        assertTrue(Await.gone(rank0, Duration.ZERO), "the rank is stopped before fleetrun exits");
    }

    @Test
    void failedRankExitCodeBecomesTheLaunchersExitCode() throws Exception {
        env.put("PROBE_FAIL_RANK", "1");
        env.put("PROBE_FAIL_MODE", "exit:7");
        LauncherRun launcher = launch("--nproc_per_node", "2", RoleProbe.class.getName());

        assertEquals(7, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertTrue(launcher.stderr().contains("rank 1 (pid " + pid("rank-1.pid", launcher) + ") exited with code 7"), launcher.stderr());
    }

    @Test
    void rankThatThrowsStopsTheOthersAndShowsItsLogTail() throws Exception {
        env.put("PROBE_FAIL_RANK", "2");
        env.put("PROBE_WAIT", "1");
        LauncherRun launcher = launch("--nproc_per_node", "3", RoleProbe.class.getName());
        long survivor0 = pid("rank-0.pid", launcher);
        long survivor1 = pid("rank-1.pid", launcher);

        int code = launcher.awaitExit(TEARDOWN_TIMEOUT.plus(Duration.ofSeconds(10)));
        assertEquals(ExitCodes.INTERNAL_ERROR, code, "an IllegalStateException out of main is a bug: " + launcher.stderr());
        String err = launcher.stderr();
        assertTrue(err.contains("fleetrun: rank 2 (pid "), err);
        assertTrue(err.contains("exited with code 1 (an internal error); stopping the other 2 running rank(s)"), err);
        assertTrue(err.contains("last 20 lines of " + work.resolve("log/workerlog.2")), err);
        assertTrue(err.contains("    Exception in thread \"main\" java.lang.IllegalStateException: probe failure on purpose in rank 2"), err);
        assertTrue(Await.gone(survivor0, Duration.ZERO) && Await.gone(survivor1, Duration.ZERO), "the other ranks are stopped before fleetrun exits");
    }

    @Test
    void rankKilledBySigkillStopsTheJob() throws Exception {
        env.put("PROBE_WAIT", "1");
        LauncherRun launcher = launch("--nproc_per_node", "2", RoleProbe.class.getName());
        long rank0 = pid("rank-0.pid", launcher);
        long rank1 = pid("rank-1.pid", launcher);

        ProcessHandle.of(rank1).orElseThrow().destroyForcibly();

        assertEquals(ExitCodes.PEER_FAILED, launcher.awaitExit(TEARDOWN_TIMEOUT), "a rank that a signal killed: "
                + launcher.stderr());
        assertTrue(launcher.stderr().contains("rank 1 (pid " + rank1 + ") was killed by signal 9 (SIGKILL, exit code 137)"), launcher.stderr());
        assertTrue(launcher.stderr().contains("    hello from rank 1 of 2"), "log tail of the killed rank: " + launcher.stderr());
        assertTrue(Await.gone(rank0, Duration.ZERO), "rank 0 is stopped before fleetrun exits");
    }

    @Test
    void sigtermToTheLauncherStopsEveryRankAndTheirChildren() throws Exception {
        env.put("PROBE_WAIT", "1");
        env.put("PROBE_CHILD", "1");
        LauncherRun launcher = launch("--nproc_per_node", "2", RoleProbe.class.getName());
        List<Long> job = List.of(pid("rank-0.pid", launcher), pid("rank-1.pid", launcher),
                pid("rank-0.child.pid", launcher), pid("rank-1.child.pid", launcher));

        // Through the handle: Process.destroy() would also close the pipes that capture the launcher's output.
        launcher.process().toHandle().destroy();

        int code = launcher.awaitExit(TEARDOWN_TIMEOUT);
        assertEquals(128 + 15, code, launcher.stderr());
        assertTrue(launcher.stderr().contains("fleetrun: stopping job default: terminating 2 running rank(s)"), launcher.stderr());
        for (long pid : job) {
            assertTrue(Await.gone(pid, Duration.ZERO), "process " + pid + " outlived the launcher");
        }
    }

    @Test
    void twoLaunchersOnLoopbackFormOneJob() throws Exception {
        int port = FreePorts.consecutive(4);
        Path token = Files.writeString(work.resolve("job.token"), JobToken.random().text());
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        List<String> common = List.of("--jvm_args", LIGHT_JVM, "--ips", "127.0.0.1,127.0.0.1", "--nproc_per_node", "2",
                "--start_port", Integer.toString(port), "--job_token_file", token.toString());
        List<LauncherRun> nodes = new ArrayList<>();
        for (int node = 0; node < 2; node++) {
            List<String> args = new ArrayList<>(common);
            args.addAll(List.of("--rank", Integer.toString(node), "--log_dir", "node" + node, RoleProbe.class.getName()));
            nodes.add(LauncherRun.javaMain(work, env, args));
        }

        for (LauncherRun node : nodes) {
            assertEquals(0, node.awaitExit(JOB_TIMEOUT), node.stderr());
        }
        // two nodes on one host: node 1's ranks come after node 0's, so every rank has its own endpoint
        String endpoints = "127.0.0.1:" + port + ",127.0.0.1:" + (port + 1) + ",127.0.0.1:" + (port + 2) + ",127.0.0.1:" + (port + 3);
        for (int rank = 0; rank < 4; rank++) {
            Properties role = role(rank);
            assertEquals(Integer.toString(rank / 2), role.getProperty("env.FLEET_NODE_RANK"));
            assertEquals(Integer.toString(rank % 2), role.getProperty("env.FLEET_LOCAL_RANK"));
            assertEquals("4", role.getProperty("env.FLEET_WORLD_SIZE"));
            assertEquals("2", role.getProperty("env.FLEET_NNODES"));
            assertEquals("127.0.0.1:" + port, role.getProperty("env.FLEET_MASTER"));
            assertEquals(endpoints, role.getProperty("env.PADDLE_TRAINER_ENDPOINTS"));
            assertTrue(Files.exists(work.resolve("node" + (rank / 2) + "/workerlog." + rank)), "global rank names the log");
        }
        assertTrue(nodes.get(0).stdout().contains("[rank 0] hello from rank 0 of 4"), nodes.get(0).stdout());
        assertFalse(nodes.get(1).stdout().contains("[rank"), "node 1 has no rank 0 to echo: " + nodes.get(1).stdout());
    }

    @Test
    void aJobOnSeveralNodesWithoutATokenIsRefusedSayingHow() throws Exception {
        env.put(JobToken.ENV, null);
        env.put(JobToken.FILE_ENV, null);
        LauncherRun launcher = launch("--ips", "127.0.0.1,127.0.0.1", "--rank", "0", RoleProbe.class.getName());

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertTrue(launcher.stderr().contains("fleetrun: a job on 2 nodes needs a job token that every node shares: pass"
                + " --job_token_file FILE"), launcher.stderr());
        assertTrue(launcher.stderr().contains("head -c 32 /dev/urandom | base64 > job.token; chmod 600 job.token"), launcher.stderr());
        assertFalse(Files.exists(probeDir.resolve("rank-0.role")), "no rank may start");
    }

    @Test
    void jarIsRunByItsMainClassWithTheJarOnTheClasspath() throws Exception {
        Path jar = JarPrograms.build(work.resolve("jarbuild"), work.resolve("app.jar"), "jarprobe.Main", """
                package jarprobe;

                import java.nio.file.Files;
                import java.nio.file.Path;
                import java.util.Arrays;

                public class Main {
                    public static void main(String[] args) throws Exception {
                        String rank = System.getenv("FLEET_RANK");
                        Files.writeString(Path.of(System.getenv("PROBE_DIR"), "rank-" + rank + ".pid"), Long.toString(ProcessHandle.current().pid()));
                        System.out.println("jar main on rank " + rank + " args " + Arrays.toString(args));
                    }
                }
                """);

        LauncherRun launcher = launch("--nproc_per_node", "2", "app.jar", "x", "--y");

        assertEquals(0, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertTrue(launcher.stdout().contains("[rank 0] jar main on rank 0 args [x, --y]\n"), launcher.stdout());
        assertTrue(Files.readString(work.resolve("log/workerlog.1")).contains("jar main on rank 1 args [x, --y]\n"));
        assertTrue(Files.exists(jar));
    }

    @Test
    void listedGpuThatIsNotVisibleIsRejectedBeforeAnyRankStarts() throws Exception {
        env.put("CUDA_VISIBLE_DEVICES", "7");
        LauncherRun launcher = launch("--devices", "0,1", RoleProbe.class.getName());

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT));
        assertTrue(launcher.stderr().contains("fleetrun: --devices 0,1: GPU 1 is not visible here; this machine shows 1 GPU(s) (0..0)"),
                launcher.stderr());
        assertFalse(Files.exists(work.resolve("log")), "nothing started, no logs");
    }

    /** With no GPU at all, listed GPU ids are refused up front instead of the ranks quietly running on the CPU. */
    @Test
    void listedGpusWithoutAnyGpuAreRefusedSayingHowToRunOnTheCpu() throws Exception {
        Assumptions.assumeFalse(Files.isDirectory(Path.of("/proc/driver/nvidia/gpus")), "this machine has an NVIDIA driver with GPUs");
        env.put("CUDA_VISIBLE_DEVICES", null);
        env.put("PATH", Files.createDirectories(work.resolve("no-nvidia-smi")).toString());
        LauncherRun launcher = launch("--devices", "0,1", RoleProbe.class.getName());

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertEquals("fleetrun: --devices 0,1: no GPU found (looked at CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus and nvidia-smi -L);"
                + " to run on the CPU, leave out --devices and give the number of ranks: --nproc_per_node 2\n", launcher.stderr());
        assertFalse(Files.exists(work.resolve("log")), "nothing started, no logs");
    }

    /** A bad strategy file is reported once by the launcher, before any rank starts, not by every rank after start-up. */
    @Test
    void badStrategyFileIsReportedOnceBeforeAnyRankStarts() throws Exception {
        Path invalid = Files.writeString(work.resolve("invalid.yaml"), "nccl_comm_num: 0\n");
        LauncherRun launcher = launch("--nproc_per_node", "2", "--strategy", "invalid.yaml", RoleProbe.class.getName());

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertEquals("fleetrun: --strategy: " + invalid + ":1: nccl_comm_num: 0 is out of range: must be at least 1\n", launcher.stderr());

        Path binary = Files.write(work.resolve("binary.yaml"), new byte[] {(byte) 0x1f, (byte) 0x8b, 8, 0});
        launcher = launch("--nproc_per_node", "2", "--strategy", "binary.yaml", RoleProbe.class.getName());

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        assertEquals("fleetrun: --strategy: " + binary + ": not a text file (byte 1 is 0x8b, not UTF-8); a strategy file is YAML, JSON"
                + " or prototxt text\n", launcher.stderr());
        assertFalse(Files.exists(work.resolve("log")), "nothing started, no logs");
    }

    /** Ranks whose heap and off-heap limits exceed the memory available are refused, with the numbers and the ways out. */
    @Test
    void cpuRanksThatCannotFitTheMemoryAreRefused() throws Exception {
        LauncherRun launcher = LauncherRun.javaMain(work, env, List.of("--nproc_per_node", "2", "--jvm_args", "-Xmx64t",
                RoleProbe.class.getName()));

        assertEquals(2, launcher.awaitExit(JOB_TIMEOUT), launcher.stderr());
        String err = launcher.stderr();
        assertTrue(err.startsWith("fleetrun: 2 rank(s) need about 256.0 TiB but this machine has "), err);
        assertTrue(err.contains(" available (MemAvailable in /proc/meminfo): each rank 128.0 TiB = heap 64.0 TiB (-Xmx) + off-heap 64.0 TiB"
                + " (-XX:MaxDirectMemorySize defaults to -Xmx) + JVM 64.0 MiB; run at most 0 rank(s) with --nproc_per_node, lower -Xmx or"
                + " -XX:MaxDirectMemorySize in --jvm_args, or pass --skip_memory_check\n"), err);
        assertEquals(1, err.lines().count(), err);
        assertFalse(Files.exists(work.resolve("log")), "nothing started, no logs");

        // --skip_memory_check goes on to the next check (here a bad strategy file, so that still nothing starts).
        Files.writeString(work.resolve("invalid.yaml"), "nccl_comm_num: 0\n");
        LauncherRun skipped = LauncherRun.javaMain(work, env, List.of("--nproc_per_node", "2", "--jvm_args", "-Xmx64t",
                "--skip_memory_check", "--strategy", "invalid.yaml", RoleProbe.class.getName()));
        assertEquals(2, skipped.awaitExit(JOB_TIMEOUT), skipped.stderr());
        assertTrue(skipped.stderr().startsWith("fleetrun: --strategy: "), skipped.stderr());
    }

    /** Ctrl-C stops the job like SIGTERM, and fleetrun exits 130 as shells expect (143 for SIGTERM, tested above). */
    @Test
    void sigintToTheLauncherStopsEveryRankAndExits130() throws Exception {
        env.put("PROBE_WAIT", "1");
        LauncherRun launcher = launch("--nproc_per_node", "2", RoleProbe.class.getName());
        List<Long> ranks = List.of(pid("rank-0.pid", launcher), pid("rank-1.pid", launcher));

        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(launcher.process().pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -INT " + launcher.process().pid());

        assertEquals(128 + 2, launcher.awaitExit(TEARDOWN_TIMEOUT), launcher.stderr());
        assertTrue(launcher.stderr().contains("fleetrun: stopping job default: terminating 2 running rank(s)"), launcher.stderr());
        for (long pid : ranks) {
            assertTrue(Await.gone(pid, Duration.ZERO), "rank " + pid + " outlived the launcher");
        }
    }

    /** No code of a launcher killed by SIGKILL runs; each rank notices within its poll that its parent is gone, and stops. */
    @Test
    void ranksStopWhenTheLauncherIsKilledBySigkill() throws Exception {
        env.put("PROBE_WAIT", "1");
        env.put("PROBE_CHILD", "1");
        LauncherRun launcher = launch("--nproc_per_node", "2", RoleProbe.class.getName());
        List<Long> job = List.of(pid("rank-0.pid", launcher), pid("rank-1.pid", launcher),
                pid("rank-0.child.pid", launcher), pid("rank-1.child.pid", launcher));

        launcher.process().toHandle().destroyForcibly();

        assertEquals(128 + 9, launcher.awaitExit(TEARDOWN_TIMEOUT));
        for (long pid : job) {
            // Promised: 5 s; the rest is slack for a loaded CI machine.
            assertTrue(Await.gone(pid, Duration.ofSeconds(8)), "process " + pid + " outlived its launcher by 8 s");
        }
        assertTrue(Files.readString(work.resolve("log/workerlog.1")).contains("rank 1: the launcher (pid " + launcher.process().pid()
                + ") is gone; stopping this rank and the processes it started"));
    }

    /** SIGTERM while the ranks' JVMs are still starting stops every process of the job within the promised time. */
    @Test
    void sigtermWhileRanksAreStillStartingStopsThemAll() throws Exception {
        env.put("PROBE_WAIT", "1");
        LauncherRun launcher = launch("--nproc_per_node", "8", "--cpu_bind", "none", RoleProbe.class.getName());
        long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
        while (launcher.process().descendants().findAny().isEmpty()) {
            assertTrue(launcher.process().isAlive() && System.nanoTime() < deadline, "no rank started: " + launcher.stderr());
            Thread.sleep(5);
        }

        List<ProcessHandle> started = launcher.process().descendants().toList();
        launcher.process().toHandle().destroy();

        assertEquals(128 + 15, launcher.awaitExit(TEARDOWN_TIMEOUT), launcher.stderr());
        for (ProcessHandle process : started) {
            assertFalse(process.isAlive(), "process " + process.pid() + " outlived the launcher");
        }
    }
}
