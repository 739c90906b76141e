package org.fleet4j.launch;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.text.Quoted;

/**
 * Where a job's token comes from. On one host fleetrun makes a fresh one, so no other job (even one with the same
 * job id and port) can share it. On several hosts every node's fleetrun must hand its ranks the same secret, which
 * only the user can arrange: {@code --job_token_file}, else {@code FLEET_JOB_TOKEN}, else {@code FLEET_JOB_TOKEN_FILE}.
 */
final class JobTokens {
    private JobTokens() {
    }

    /** @throws LaunchException naming the flag or variable when the token is missing, too short or not private */
    static JobToken forJob(String tokenFile, Map<String, String> env, ClusterLayout layout) {
        try {
            if (tokenFile != null) {
                return JobToken.fromFile(path(tokenFile), "--job_token_file");
            }
            if (layout.nnodes() == 1) {
                return JobToken.random();
            }
            if (env.get(JobToken.ENV) != null || env.get(JobToken.FILE_ENV) != null) {
                return JobToken.fromEnvironment(env, layout.worldSize());
            }
        } catch (IllegalArgumentException e) {
            throw new LaunchException(e.getMessage(), e);
        }
        throw new LaunchException("a job on " + layout.nnodes() + " nodes needs a job token that every node shares: pass"
                + " --job_token_file FILE (the same file on each node) or export " + JobToken.ENV + "; "
                + JobToken.HOW_TO_MAKE);
    }

    private static Path path(String value) {
        try {
            return Path.of(value).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw new LaunchException("--job_token_file " + Quoted.of(value) + ": not a valid path (" + e.getReason() + ")", e);
        }
    }
}
