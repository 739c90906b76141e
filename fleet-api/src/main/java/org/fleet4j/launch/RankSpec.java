package org.fleet4j.launch;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.fleet4j.collective.JobToken;

/** Everything needed to start one rank's JVM: its ranks, command line, environment and log file. */
public record RankSpec(int globalRank, int localRank, List<String> command, Map<String, String> environment, Path logFile) {
    public RankSpec {
        command = List.copyOf(command);
        environment = Map.copyOf(environment);
    }

    /** The environment as it may be shown: the job token hidden. */
    public Map<String, String> printableEnvironment() {
        Map<String, String> shown = new TreeMap<>(environment);
        shown.computeIfPresent(JobToken.ENV, (name, secret) -> "(hidden)");
        return shown;
    }
}
