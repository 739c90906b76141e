package org.fleet4j.launch;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.fleet4j.collective.JobToken;

/**
 * A fully resolved job on this node: the layout, what to run and how every rank's JVM is started.
 *
 * @param javaBinary the java launcher of the rank JVMs (the launcher's own)
 * @param baseClasspath the launcher's classpath, which the ranks share
 * @param logDir absolute directory of workerlog.N and endpoints.log
 * @param strategy absolute path of the strategy file, or null
 * @param cpus which CPUs each rank may run on (--cpu_bind)
 * @param token the job's secret, which the ranks get in their environment and nothing prints
 */
public record LaunchPlan(ClusterLayout layout, DeviceSelection devices, Program program, List<String> programArgs, Path javaBinary,
                         List<Path> baseClasspath, List<String> jvmArgs, Path logDir, String jobId, LogLevel logLevel, Path strategy,
                         CpuBinding cpus, JobToken token) {
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

    public List<RankSpec> ranks() {
        return IntStream.range(0, layout.nprocPerNode()).mapToObj(this::rank).toList();
    }

    private RankSpec rank(int localRank) {
        List<String> command = new ArrayList<>(cpus.prefix(localRank));
        command.add(javaBinary.toString());
        command.addAll(REQUIRED_JVM_FLAGS);
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classpath());
        command.add(RankMain.class.getName());
        command.add(Long.toString(ProcessHandle.current().pid()));
        command.add(program.mainClass());
        command.addAll(programArgs);
        int globalRank = layout.globalRank(localRank);
        var env = RankEnvironment.of(layout, devices, localRank, jobId, logDir, logLevel, strategy);
        env.put(JobToken.ENV, token.text());
        return new RankSpec(globalRank, localRank, command, env, logDir.resolve("workerlog." + globalRank));
    }

    private String classpath() {
        List<String> entries = new ArrayList<>();
        baseClasspath.forEach(p -> entries.add(p.toString()));
        program.extraClasspath().forEach(p -> entries.add(p.toString()));
        return String.join(File.pathSeparator, entries);
    }

    /** endpoints.log: where every rank of this node listens, and the master they meet at. */
    public String endpointsReport() {
        StringBuilder out = new StringBuilder();
        out.append("job ").append(jobId).append(": ").append(layout.worldSize()).append(" ranks on ").append(layout.nnodes())
                .append(" node(s), this is node ").append(layout.nodeRank()).append(" (").append(layout.host()).append(")\n");
        out.append("master ").append(layout.master()).append('\n');
        for (RankSpec rank : ranks()) {
            out.append("rank ").append(rank.globalRank()).append(" local_rank ").append(rank.localRank()).append(' ')
                    .append(layout.endpoint(rank.localRank()));
            if (devices.isGpu()) {
                out.append(" gpu ").append(devices.gpuIds().get(rank.localRank()));
            }
            if (cpus.bound()) {
                out.append(" cpus ").append(cpus.slices().get(rank.localRank()));
            }
            out.append('\n');
        }
        layout.allEndpoints().ifPresent(all -> out.append("PADDLE_TRAINER_ENDPOINTS ").append(String.join(",", all)).append('\n'));
        return out.toString();
    }
}
