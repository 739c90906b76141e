package org.fleet4j.launch;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.fleet.Fleet;

/**
 * The launcher's job supervision ({@link Job}) run on a plan with parameter servers, which the command line does not
 * ask for yet: args are LOG_DIR RANKS SERVERS, the program is {@link RoleProbe} in light JVMs; exits with the job's code.
 */
public final class ServerPlanLauncher {
    private ServerPlanLauncher() {
    }

    public static void main(String[] args) throws Exception {
        Path logDir = Path.of(args[0]).toAbsolutePath();
        int ranks = Integer.parseInt(args[1]);
        int servers = Integer.parseInt(args[2]);
        int firstServerPort = FreePorts.consecutive(servers);
        ServerLayout serverLayout = ServerLayout.allHere(IntStream.range(0, servers)
                .mapToObj(i -> new HostPort("127.0.0.1", firstServerPort + i)).toList());
        List<Path> classpath = new ArrayList<>();
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator)).forEach(e -> classpath.add(Path.of(e)));
        LaunchPlan plan = new LaunchPlan(ClusterLayout.plan(null, null, null, null, null, ranks), serverLayout,
                DeviceSelection.CPU, Program.resolve(RoleProbe.class.getName(), classpath), List.of(),
                Path.of(System.getProperty("java.home"), "bin", "java"), classpath,
                JvmArgs.split("-XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx64m"), logDir, "ps-job", LogLevel.INFO,
                null, CpuBinding.none("not bound (test)"), JobToken.random(), false, true);
        System.exit(new Job(plan, System.out, System.err, Fleet.timeout(System.getenv("FLEET_TIMEOUT"))).run());
    }
}
