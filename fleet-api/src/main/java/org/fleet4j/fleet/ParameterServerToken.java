package org.fleet4j.fleet;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;

/**
 * The token of a parameter-server job's processes (its servers' connections and its trainers' group). A job that
 * gives one ({@link JobToken#ENV} or {@link JobToken#FILE_ENV}; bin/fleetrun always does) uses it. A job started by
 * hand with only Paddle's variables, as Paddle's own PS jobs are, has none: it gets a token derived from those
 * variables (the server list and the number of trainers), which every process of the job computes alike. That token
 * is no secret: anyone who can read the variables can derive it, so such a job is as open as Paddle's (whoever reaches
 * its ports can join), and the token only keeps two jobs from mixing. Each process says so in one line.
 */
final class ParameterServerToken {
    private ParameterServerToken() {
    }

    static JobToken of(Map<String, String> env, Role role, PrintStream log) {
        if (env.get(JobToken.ENV) != null || env.get(JobToken.FILE_ENV) != null || role.serverNum() == 0) {
            return JobToken.fromEnvironment(env, role.workerNum() + role.serverNum());
        }
        log.println("fleet: no " + JobToken.ENV + ": this parameter-server job is not protected (any process that reaches"
                + " its ports can join, as in Paddle); export the same " + JobToken.ENV + " to all its processes to protect"
                + " it (" + JobToken.HOW_TO_MAKE + ")");
        return derived(role);
    }

    /** The same text in every process of the job: the servers' endpoints in order and the number of trainers. */
    static JobToken derived(Role role) {
        String job = "fleet4j-paddle-ps-job\n" + String.join(",", role.serverEndpoints()) + "\n" + role.workerNum();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(job.getBytes(StandardCharsets.UTF_8));
            return JobToken.of(Base64.getEncoder().encodeToString(digest), "Paddle's PADDLE_PSERVERS_IP_PORT_LIST and"
                    + " PADDLE_TRAINERS_NUM");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
