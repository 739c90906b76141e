package org.fleet4j.launch;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;

/**
 * Everything needed to start one process of the job: its kind and index among the processes of that kind (a trainer's
 * global rank, a server's index), command line, environment, log file, and what its end means to the job.
 */
public record RankSpec(Role.Kind kind, int index, int localRank, List<String> command, Map<String, String> environment,
                       Path logFile, ExitPolicy exitPolicy) {
    /** What the end of a process means to the job. */
    public enum ExitPolicy {
        /** The job lasts until every such process has finished; a non-zero exit fails the job. */
        FINISHES,
        /** Serves until stopped: stopped once every {@link #FINISHES} process has finished; ending before that fails the job. */
        RUNS_UNTIL_STOPPED
    }

    public RankSpec {
        command = List.copyOf(command);
        environment = Map.copyOf(environment);
    }

    /** "rank 3" or "server 1": how the launcher's messages name the process. */
    public String name() {
        return (kind == Role.Kind.PSERVER ? "server " : "rank ") + index;
    }

    /** This process with another environment (the dry run adds variables). */
    public RankSpec withEnvironment(Map<String, String> env) {
        return new RankSpec(kind, index, localRank, command, env, logFile, exitPolicy);
    }

    /** The environment as it may be shown: the job token hidden. */
    public Map<String, String> printableEnvironment() {
        Map<String, String> shown = new TreeMap<>(environment);
        shown.computeIfPresent(JobToken.ENV, (name, secret) -> "(hidden)");
        return shown;
    }
}
