package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A pod of a Kubeflow PaddleJob (training-operator v1, {@code pkg/controller.v1/paddlepaddle/envvar.go}): the operator
 * sets PADDLE_MASTER (worker 0's {@code <job>-worker-0:port}, port of the container port named {@code master}; worker
 * 0 itself gets its own pod IP there), PADDLE_NNODES (the replicas of every type) and PADDLE_JOB_ID (the job's name),
 * and no rank: Paddle's launcher learns it from the master. Fleet4J takes it from PADDLE_RANK (Paddle's launcher
 * reads that variable as its --rank; a manifest sets it from the pod's {@code training.kubeflow.org/replica-index}
 * label), else from the pod's host name {@code <PADDLE_JOB_ID>-worker-<i>} (HOSTNAME). PADDLE_NPROC_PER_NODE, when
 * set, is the ranks per pod.
 *
 * <p>A job with a Master replica is Paddle's parameter-server mode (PADDLE_SERVER_NUM on the Master pods,
 * PADDLE_TRAINER_NUM on the Workers), where the operator names no server list; it is refused with a pointer to a
 * Volcano job, whose variables list every server.
 */
@AutoService(ClusterEnvironment.class)
public final class PaddleJobEnvironment implements ClusterEnvironment {
    public static final String NAME = "PaddleJob (Kubeflow training-operator)";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 35;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("PADDLE_MASTER") || vars.has("PADDLE_NNODES");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        if (vars.has("PADDLE_SERVER_NUM") || vars.has("PADDLE_TRAINER_NUM")) {
            throw vars.error((vars.has("PADDLE_SERVER_NUM") ? "PADDLE_SERVER_NUM" : "PADDLE_TRAINER_NUM") + " is set: this"
                    + " PaddleJob has a Master replica, Paddle's parameter-server mode, for which the operator lists no"
                    + " servers; run parameter servers as a Volcano job (docs/examples/kubernetes/volcano-ps.yaml)");
        }
        int nodes = vars.positive("PADDLE_NNODES");
        String jobId = vars.string("PADDLE_JOB_ID", vars.jobId());
        int node = vars.has("PADDLE_RANK") ? vars.index("PADDLE_RANK", nodes, "PADDLE_NNODES") : rankFromHost(vars, jobId, nodes);
        String master = vars.has("FLEET_MASTER") ? vars.string("FLEET_MASTER") : vars.string("PADDLE_MASTER", null);
        if (master == null && nodes > 1) {
            throw vars.error("environment variable PADDLE_MASTER is not set: PADDLE_NNODES=" + nodes + " pods need the"
                    + " master's host:port");
        }
        Integer nproc = vars.has("PADDLE_NPROC_PER_NODE") ? Integer.valueOf(vars.positive("PADDLE_NPROC_PER_NODE")) : null;
        return new Placement.Nodes(NAME, nodes, node, nproc, master, List.of(), vars.string("FLEET_HOST", null), jobId,
                vars.read());
    }

    private static int rankFromHost(EnvVars vars, String jobId, int nodes) {
        String host = vars.string("HOSTNAME", "");
        Matcher m = Pattern.compile(Pattern.quote(jobId) + "-worker-(\\d+)").matcher(host);
        if (!m.matches() || Integer.parseInt(m.group(1)) >= nodes) {
            throw vars.error("environment variable PADDLE_RANK is not set, and the pod's host name HOSTNAME="
                    + (host.isEmpty() ? "(unset)" : host) + " is not " + jobId + "-worker-<i> with i < PADDLE_NNODES=" + nodes
                    + "; set PADDLE_RANK from the pod's label training.kubeflow.org/replica-index (docs/CLUSTERS.md)");
        }
        return Integer.parseInt(m.group(1));
    }
}
