package org.fleet4j.fleet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.compiler.HierarchicalAllreducePass;
import org.fleet4j.compiler.HierarchicalForm;
import org.fleet4j.compiler.OverlapAllreducePass;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.fleet.role.EnvironmentRoleMaker;
import org.fleet4j.strategy.DistributedStrategy;

/**
 * Gradient allreduce on two "hosts" of two ranks: two network namespaces joined by a veth pair whose link tc shapes
 * (a token bucket at the given rate, each direction), so the inter-host stage crosses a real, slower link while each host's two ranks share memory.
 * One job, the variants taking turns on the same tensors: {@code flat} (c_allreduce on a TCP group of all four ranks,
 * a ring that crosses the link twice), {@code reduce} (the compiled reduce form: c_reduce on the host's shared
 * memory, c_leaders_allreduce over the link, c_broadcast), {@code rsag} (the compiled reduce-scatter/allgather form:
 * c_reducescatter on shared memory, c_allreduce of each half on the two cross rings over the link, c_allgather),
 * {@code rsag_overlap} (the same pipelined as with sync_nccl_allreduce false: tensor k's cross allreduce is started
 * and waited for only after tensor k + 1's reduce-scatter) and {@code collective} (c_allreduce on the default group, which the collective module itself builds hierarchically for
 * ranks on several hosts). Rank 0 prints the median step of each and the ratios. Not a test (surefire does not run
 * it); it needs root for the namespaces.
 * <p>Arguments: {@code RATE TENSORS FLOATS ROUNDS} (e.g. {@code 1gbit 8 262144 15}).
 */
public final class HierarchicalAllreduceBenchmark {
    private static final int FLAT_RING = 99;
    private static final int STEPS_PER_TURN = 3;

    private HierarchicalAllreduceBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getenv("FLEET_WORLD_SIZE") != null) {
            rank(Integer.parseInt(args[1]), Long.parseLong(args[2]), Integer.parseInt(args[3]));
        } else {
            launch(args);
        }
    }

    private static void launch(String[] args) throws Exception {
        String tag = "f4jh" + ProcessHandle.current().pid() % 100000;
        String[] ns = {tag + "n0", tag + "n1"};
        String[] ip = {"10.214." + ProcessHandle.current().pid() % 250 + ".1", "10.214." + ProcessHandle.current().pid() % 250 + ".2"};
        String[] veth = {tag + "a", tag + "b"};
        Path logs = Files.createTempDirectory("hier-bench");
        List<Process> ranks = new ArrayList<>();
        try {
            sh("ip", "netns", "add", ns[0]);
            sh("ip", "netns", "add", ns[1]);
            sh("ip", "link", "add", veth[0], "type", "veth", "peer", "name", veth[1]);
            for (int i = 0; i < 2; i++) {
                sh("ip", "link", "set", veth[i], "netns", ns[i]);
                sh("ip", "-n", ns[i], "addr", "add", ip[i] + "/24", "dev", veth[i]);
                sh("ip", "-n", ns[i], "link", "set", veth[i], "up");
                sh("ip", "-n", ns[i], "link", "set", "lo", "up");
                sh("ip", "netns", "exec", ns[i], "tc", "qdisc", "add", "dev", veth[i], "root", "tbf", "rate", args[0],
                        "burst", "256kb", "latency", "50ms");
            }
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String job = "hier-bench-" + ProcessHandle.current().pid();
            String token = JobToken.random().text();
            for (int r = 0; r < 4; r++) {
                int node = r / 2;
                List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns[node], java,
                        "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector", "-Xmx1g",
                        "-cp", System.getProperty("java.class.path"), HierarchicalAllreduceBenchmark.class.getName()));
                cmd.addAll(Arrays.asList(args));
                ProcessBuilder pb = new ProcessBuilder(cmd);
                pb.environment().putAll(Map.of("FLEET_RANK", "" + r, "FLEET_WORLD_SIZE", "4", "FLEET_LOCAL_RANK", "" + r % 2,
                        "FLEET_LOCAL_WORLD_SIZE", "2", "FLEET_NNODES", "2", "FLEET_NODE_RANK", "" + node,
                        "FLEET_MASTER", ip[0] + ":29517", "FLEET_HOST", ip[node], "FLEET_JOB_ID", job));
                pb.environment().put(JobToken.ENV, token);
                pb.redirectErrorStream(true).redirectOutput(logs.resolve("rank-" + r + ".log").toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < 4; r++) {
                if (!ranks.get(r).waitFor(580, TimeUnit.SECONDS) || ranks.get(r).exitValue() != 0) {
                    System.out.println("rank " + r + " failed or ran too long; its log:\n"
                            + Files.readString(logs.resolve("rank-" + r + ".log")));
                }
            }
            System.out.print(Files.readString(logs.resolve("rank-0.log")));
        } finally {
            ranks.forEach(Process::destroyForcibly);
            for (String n : ns) {
                try {
                    sh("ip", "netns", "del", n);
                } catch (IOException e) {
                    System.err.println("could not remove network namespace " + n + ": " + e.getMessage());
                }
            }
        }
    }

    private static void rank(int tensors, long floats, int rounds) {
        DistributedStrategy strategy = new DistributedStrategy().useHierarchicalAllreduce(true).fuseAllReduceOps(false);
        if (HierarchicalForm.parse(System.getenv(HierarchicalForm.ENV)) == HierarchicalForm.REDUCE) {
            throw new IllegalArgumentException(HierarchicalForm.ENV + "=reduce opens no cross rings; the rsag variant needs"
                    + " them: leave it unset");
        }
        GroupOptions options = GroupOptions.defaults();
        try (Fleet fleet = Fleet.init(EnvironmentRoleMaker.fromSystem(), strategy, options, System.out);
             ProcessGroup flat = fleet.processGroup().newGroup("flat", options.withBackend(Backend.TCP))) {
            Program startup = new Program();
            Program collective = syncProgram(startup, tensors, floats, fleet.workerIndex(), Fleet.DEFAULT_RING);
            Program flatRing = syncProgram(new Program(), tensors, floats, fleet.workerIndex(), FLAT_RING);
            Program reduce = new HierarchicalAllreducePass(RingLayout.of(fleet.strategy(), HierarchicalForm.REDUCE))
                    .apply(collective).program();
            Program rsag = new HierarchicalAllreducePass(RingLayout.of(fleet.strategy(), HierarchicalForm.RSAG))
                    .apply(collective).program();
            Program pipelined = new OverlapAllreducePass().apply(new HierarchicalAllreducePass(
                    RingLayout.of(fleet.strategy(), HierarchicalForm.RSAG), true).apply(collective).program()).program();
            List<String> names = List.of("flat", "reduce", "rsag", "rsag_overlap", "collective");
            List<Program> programs = List.of(flatRing, reduce, rsag, pipelined, collective);
            Executor exe = new Executor(ExecutorOptions.defaults(),
                    fleet.execContext().toBuilder().ring(FLAT_RING, flat).build());
            Scope scope = new Scope();
            exe.run(startup, scope);
            for (Program p : programs) {
                exe.run(p, scope);
                float v = scope.get("g0").getFloat(0);
                float last = scope.get("g" + (tensors - 1)).getFloat(floats - 1);
                if (Math.abs(v - 2.5f) > 1e-5f || Math.abs(last - 2.5f) > 1e-5f) {
                    throw new IllegalStateException("after one step the average of 1, 2, 3, 4 should be 2.5, is " + v
                            + " (first element) and " + last + " (last)");
                }
            }
            double[][] perStep = new double[programs.size()][rounds];
            for (int round = 0; round < rounds; round++) {
                for (int v = 0; v < programs.size(); v++) {
                    long t0 = System.nanoTime();
                    for (int s = 0; s < STEPS_PER_TURN; s++) {
                        exe.run(programs.get(v), scope);
                    }
                    perStep[v][round] = (System.nanoTime() - t0) / 1e6 / STEPS_PER_TURN;
                }
            }
            if (fleet.isFirstWorker()) {
                double mb = tensors * floats * 4 / 1e6;
                System.out.printf(Locale.ROOT, "%d tensors x %d floats = %.1f MB per step, %d rounds x %d steps per"
                        + " variant, load average %s%n", tensors, floats, mb, rounds, STEPS_PER_TURN, loadAverage());
                double flatMedian = median(perStep[0]);
                for (int v = 0; v < programs.size(); v++) {
                    double m = median(perStep[v]);
                    System.out.printf(Locale.ROOT, "%-12s median %8.1f ms/step  %6.1f MB/s  flat/this %.2fx%n",
                            names.get(v), m, mb / (m / 1e3), flatMedian / m);
                }
            }
        }
    }

    /** Persistable tensors g0..g(n-1) filled with rank + 1 by {@code startup}, and one avg c_allreduce each on a ring. */
    private static Program syncProgram(Program startup, int tensors, long floats, int rank, int ring) {
        Program main = new Program();
        Block block = main.globalBlock();
        for (int i = 0; i < tensors; i++) {
            String g = "g" + i;
            block.createVar(g, DType.F32, floats).setPersistable(true);
            if (!startup.globalBlock().hasVar(g)) {
                startup.globalBlock().createVar(g, DType.F32, floats).setPersistable(true);
                startup.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(g)),
                        Map.of("shape", new long[]{floats}, "dtype", "float32", "value", (float) (rank + 1)));
            }
            block.appendOp("c_allreduce", Map.of("X", List.of(g)), Map.of("Out", List.of(g)),
                    Map.of("ring_id", ring, "reduce", "avg"));
        }
        main.setStartupProgram(startup);
        return main;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static void sh(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " did not finish in 20 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
