package org.fleet4j.launch;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.text.Quoted;

/**
 * Where a job's token comes from. On one host fleetrun makes a fresh one, so no other job (even one with the same
 * job id and port) can share it. On several hosts every node's fleetrun must hand its ranks the same secret, which
 * only the user can arrange: {@code --job_token_file}, else {@code FLEET_JOB_TOKEN}, else {@code FLEET_JOB_TOKEN_FILE};
 * without one the job is refused, unless the user opts out with FLEET_INSECURE=1.
 */
final class JobTokens {
    private JobTokens() {
    }

    /**
     * The job's token; null for a job on several nodes without one and FLEET_INSECURE=1 (its processes each derive
     * the same one from the job's endpoints, and each warns; {@code warn} is told too).
     *
     * @throws LaunchException naming the flag or variable when the token is missing, too short or not private
     */
    static JobToken forJob(String tokenFile, Map<String, String> env, ClusterLayout layout, Consumer<String> warn) {
        try {
            if (tokenFile != null) {
                return JobToken.fromFile(path(tokenFile), "--job_token_file");
            }
            if (layout.nnodes() == 1) {
                return JobToken.random();
            }
            if (env.get(JobToken.ENV) != null || env.get(JobToken.FILE_ENV) != null) {
                return JobToken.fromEnvironment(env, layout.worldSize(), "", warn);
            }
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
        if (JobToken.insecure(env)) {
            warn.accept(JobToken.INSECURE_ENV + "=1: this job on " + layout.nnodes() + " nodes runs without a job token;"
                    + " every process of it says so");
            return null;
        }
        throw new LaunchException("a job on " + layout.nnodes() + " nodes needs a job token that every node shares: pass"
                + " --job_token_file FILE (the same file on each node) or export " + JobToken.ENV + "; "
                + JobToken.HOW_TO_MAKE + " (or set " + JobToken.INSECURE_ENV + "=1 to run the job unprotected)");
    }

    private static Path path(String value) {
        try {
            return Path.of(value).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw new LaunchException("--job_token_file " + Quoted.of(value) + ": not a valid path (" + e.getReason() + ")", e);
        }
    }
}
