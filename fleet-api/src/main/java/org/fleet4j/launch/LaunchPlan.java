package org.fleet4j.launch;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.metrics.RankMetrics;

/**
 * A fully resolved job on this node: the layout, what to run and how every process's JVM is started. The processes
 * are of two kinds: the trainers (ranks) of the layout, and the parameter servers of {@code servers} that this node
 * starts; each kind has its own environment, log name and exit policy ({@link RankSpec}).
 *
 * @param servers the job's parameter servers; {@link ServerLayout#none()} in collective mode
 * @param javaBinary the java launcher of the rank JVMs (the launcher's own)
 * @param baseClasspath the launcher's classpath, which the ranks share
 * @param logDir absolute directory of workerlog.N, serverlog.N and endpoints.log
 * @param strategy absolute path of the strategy file, or null
 * @param cpus which CPUs each rank may run on (--cpu_bind)
 * @param token the job's secret, which the ranks get in their environment and nothing prints; null for a job on several
 *              nodes run without one (FLEET_INSECURE=1), whose processes each derive the same
 * @param rankMetrics whether each rank reports its figures to the launcher ({@code --metrics_port}) in
 *     {@link #metricsFile}, named in its {@value RankMetrics#FILE_ENV}
 * @param trainersHere whether this node starts the layout's trainers; false for a scheduler's pod that holds only a
 *     parameter server ({@link DetectedCluster})
 */
public record LaunchPlan(ClusterLayout layout, ServerLayout servers, DeviceSelection devices, Program program, List<String> programArgs, Path javaBinary,
                         List<Path> baseClasspath, List<String> jvmArgs, Path logDir, String jobId, LogLevel logLevel, Path strategy,
                         CpuBinding cpus, JobToken token, boolean rankMetrics,
                         boolean trainersHere) {
    /**
     * The flags every Fleet4J JVM needs: FFM native calls (BLAS, shared memory), the Vector API, and protobuf-java's
     * sun.misc.Unsafe calls allowed without JDK 24+'s warning on every rank's log (ONNX export; no protobuf-java
     * release avoids them yet).
     */
    public static final List<String> REQUIRED_JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
            "--sun-misc-unsafe-memory-access=allow");

    public LaunchPlan {
        programArgs = List.copyOf(programArgs);
        baseClasspath = List.copyOf(baseClasspath);
        jvmArgs = List.copyOf(jvmArgs);
    }

    /** Every process this node starts: its parameter servers first, then its trainers. */
    public List<RankSpec> processes() {
        return Stream.concat(serverProcesses().stream(), ranks().stream()).toList();
    }

    /** This node's trainers. */
    public List<RankSpec> ranks() {
        return IntStream.range(0, trainersHere ? layout.nprocPerNode() : 0).mapToObj(this::rank).toList();
    }

    /** This node's parameter servers. */
    public List<RankSpec> serverProcesses() {
        List<RankSpec> specs = new ArrayList<>();
        for (int i = 0; i < servers.local().size(); i++) {
            specs.add(server(servers.local().get(i), i));
        }
        return specs;
    }

    private RankSpec rank(int localRank) {
        int globalRank = layout.globalRank(localRank);
        var env = RankEnvironment.of(layout, servers, devices, localRank, jobId, logDir, logLevel, strategy);
        putToken(env);
        if (rankMetrics) {
            env.put(RankMetrics.FILE_ENV, metricsFile(globalRank).toString());
        }
        return new RankSpec(Role.Kind.TRAINER, globalRank, localRank, command(cpus.prefix(localRank)), env,
                logDir.resolve("workerlog." + globalRank), RankSpec.ExitPolicy.FINISHES);
    }

    /** Where rank {@code globalRank} writes its figures for the launcher's metrics endpoint, beside its log. */
    public Path metricsFile(int globalRank) {
        return logDir.resolve("workermetrics." + globalRank);
    }

    /** Servers keep to no CPU slice: the trainers' slices cover the node's CPUs. */
    private RankSpec server(int index, int localIndex) {
        var env = RankEnvironment.server(layout, servers, index, jobId, logDir, logLevel, strategy);
        putToken(env);
        return new RankSpec(Role.Kind.PSERVER, index, localIndex, command(List.of()), env, logDir.resolve("serverlog." + index),
                RankSpec.ExitPolicy.RUNS_UNTIL_STOPPED);
    }

    private void putToken(Map<String, String> env) {
        if (token != null) {
            env.put(JobToken.ENV, token.text());
        }
    }

    private List<String> command(List<String> cpuPrefix) {
        List<String> command = new ArrayList<>(cpuPrefix);
        command.add(javaBinary.toString());
        command.addAll(REQUIRED_JVM_FLAGS);
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classpath());
        command.add(RankMain.class.getName());
        command.add(Long.toString(ProcessHandle.current().pid()));
        command.add(program.mainClass());
        command.addAll(programArgs);
        return command;
    }

    private String classpath() {
        List<String> entries = new ArrayList<>();
        baseClasspath.forEach(p -> entries.add(p.toString()));
        program.extraClasspath().forEach(p -> entries.add(p.toString()));
        return String.join(File.pathSeparator, entries);
    }

    /** endpoints.log: where every rank and server of this node listens, and the master the ranks meet at. */
    public String endpointsReport() {
        StringBuilder out = new StringBuilder();
        out.append("job ").append(jobId).append(": ").append(layout.worldSize()).append(" ranks on ").append(layout.nnodes())
                .append(" node(s), this is node ").append(layout.nodeRank()).append(" (").append(layout.host()).append(")\n");
        out.append("master ").append(layout.master()).append('\n');
        for (RankSpec rank : ranks()) {
            out.append("rank ").append(rank.index()).append(" local_rank ").append(rank.localRank()).append(' ')
                    .append(layout.endpoint(rank.localRank()));
            if (devices.isGpu()) {
                out.append(" gpu ").append(devices.gpuIds().get(rank.localRank()));
            }
            if (cpus.bound()) {
                out.append(" cpus ").append(cpus.slices().get(rank.localRank()));
            }
            out.append('\n');
        }
        for (RankSpec server : serverProcesses()) {
            out.append("server ").append(server.index()).append(' ').append(servers.endpoints().get(server.index())).append('\n');
        }
        layout.allEndpoints().ifPresent(all -> out.append("PADDLE_TRAINER_ENDPOINTS ").append(String.join(",", all)).append('\n'));
        if (!servers.isEmpty()) {
            out.append("PADDLE_PSERVERS_IP_PORT_LIST ").append(servers.endpointList()).append('\n');
            out.append("FLEET_PS_ENDPOINT_MAP ").append(servers.dataEndpointMap())
                    .append(" (grpc++ data ports; an .endpoint_map file overrides them)\n");
        }
        return out.toString();
    }
}
