package org.fleet4j.examples;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.FreePorts;
import org.junit.jupiter.api.Assumptions;

/**
 * A one-node Slurm cluster of this machine, run by the test: Debian's {@code slurm-wlm} daemons {@code slurmctld -D}
 * and {@code slurmd -D} with a slurm.conf of their own in a temporary folder (free ports, state and spool there,
 * processes tracked without cgroups), authenticated by a {@code munged} with its own key and socket. {@link #close}
 * stops the three by their process handles. Needs root (the daemons run as SlurmUser root).
 */
final class LocalSlurm implements AutoCloseable {
    private static final Duration READY = Duration.ofSeconds(60);
    private final Path dir;
    private final List<Process> daemons = new ArrayList<>();

    private LocalSlurm(Path dir) {
        this.dir = dir;
    }

    /** Starts the cluster, or skips the test saying why where Slurm or munge is not installed or the user is not root. */
    static LocalSlurm startOrSkip(Path dir) throws IOException, InterruptedException {
        for (String tool : List.of("slurmctld", "slurmd", "sbatch", "munged")) {
            Assumptions.assumeTrue(onPath(tool), tool + " is not installed (apt-get install slurm-wlm munge,"
                    + " scripts/install-deps.sh): the test with a real Slurm is skipped");
        }
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "a local Slurm runs its daemons as root;"
                + " the test with a real Slurm is skipped for user " + System.getProperty("user.name"));
        LocalSlurm slurm = new LocalSlurm(dir);
        try {
            slurm.start();
            return slurm;
        } catch (IOException | InterruptedException | RuntimeException | AssertionError e) {
            slurm.close();
            throw e;
        }
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/usr/sbin").concat(":/usr/sbin:/sbin").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    private void start() throws IOException, InterruptedException {
        for (String sub : List.of("run", "log", "state", "spool")) {
            Files.createDirectories(dir.resolve(sub));
        }
        byte[] key = new byte[1024];
        new SecureRandom().nextBytes(key);
        Path keyFile = Files.write(dir.resolve("munge.key"), key);
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("r--------"));
        Path socket = dir.resolve("run/munge.sock");
        daemons.add(daemon("munged", List.of("munged", "-F", "-f", "--key-file=" + keyFile, "--socket=" + socket,
                "--log-file=" + dir.resolve("log/munged.log"), "--pid-file=" + dir.resolve("run/munged.pid"),
                "--seed-file=" + dir.resolve("run/munged.seed"))));
        String host = InetAddress.getLocalHost().getHostName();
        int ports = FreePorts.consecutive(2);
        Files.writeString(conf(), String.join("\n",
                "ClusterName=fleet4j",
                "SlurmctldHost=" + host,
                "SlurmctldPort=" + ports,
                "SlurmdPort=" + (ports + 1),
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "AuthInfo=socket=" + socket,
                "CredType=cred/munge",
                "StateSaveLocation=" + dir.resolve("state"),
                "SlurmdSpoolDir=" + dir.resolve("spool"),
                "SlurmctldPidFile=" + dir.resolve("run/slurmctld.pid"),
                "SlurmdPidFile=" + dir.resolve("run/slurmd.pid"),
                "SlurmctldLogFile=" + dir.resolve("log/slurmctld.log"),
                "SlurmdLogFile=" + dir.resolve("log/slurmd.log"),
                // no cgroups in a container: processes tracked by their parents, tasks not bound
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "MpiDefault=none",
                "ReturnToService=2",
                "JobCompType=jobcomp/none",
                "AccountingStorageType=accounting_storage/none",
                "JobAcctGatherType=jobacct_gather/none",
                "NodeName=" + host + " CPUs=2 State=UNKNOWN",
                "PartitionName=debug Nodes=" + host + " Default=YES MaxTime=INFINITE State=UP", ""));
        awaitOutput(List.of("munge", "-n", "-S", socket.toString()), "", "munged to answer on " + socket);
        daemons.add(daemon("slurmctld", List.of("slurmctld", "-D", "-f", conf().toString())));
        daemons.add(daemon("slurmd", List.of("slurmd", "-D", "-f", conf().toString())));
        awaitOutput(List.of("sinfo", "-h", "-o", "%T"), "idle", "node " + host + " to be idle in sinfo");
    }

    Path conf() {
        return dir.resolve("slurm.conf");
    }

    /** SLURM_CONF for the client commands. */
    Map<String, String> environment() {
        return Map.of("SLURM_CONF", conf().toString());
    }

    private Process daemon(String name, List<String> command) throws IOException {
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("log/" + name + ".out").toFile())
                .start();
    }

    /** Polls {@code command} until its output contains {@code expected} and it exits 0, at most {@link #READY}. */
    private void awaitOutput(List<String> command, String expected, String what) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + READY.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            for (Process d : daemons) {
                if (!d.isAlive()) {
                    throw new AssertionError("a Slurm daemon exited (code " + d.exitValue() + ") while waiting for " + what
                            + "\n" + logs());
                }
            }
            ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
            b.environment().putAll(environment());
            Process p = b.start();
            if (p.waitFor(10, TimeUnit.SECONDS)) {
                last = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (p.exitValue() == 0 && last.contains(expected)) {
                    return;
                }
            } else {
                p.destroyForcibly();
            }
            Thread.sleep(200);
        }
        throw new AssertionError("waited " + READY + " for " + what + "; last answer: " + last + "\n" + logs());
    }

    /** The daemons' logs, for a failure's message. */
    String logs() {
        return TwoHostNetwork.logs(dir.resolve("log"));
    }

    /** Stops slurmd, slurmctld and munged, newest first, by their processes: TERM, then KILL after 10 s. */
    @Override
    public void close() {
        for (int i = daemons.size() - 1; i >= 0; i--) {
            Process d = daemons.get(i);
            d.destroy();
            try {
                if (!d.waitFor(10, TimeUnit.SECONDS)) {
                    d.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                d.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
