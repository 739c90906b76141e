package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A pod of a Kubeflow PyTorchJob (training-operator v1, {@code pkg/controller.v1/pytorch/envvar.go}): the operator
 * sets MASTER_ADDR ({@code <job>-master-0}) and MASTER_PORT (the Master's container port named
 * {@code pytorchjob-port}), WORLD_SIZE (replicas x nprocPerNode), RANK (the pod's index: the Master 0, Worker i is
 * i + 1), PET_NODE_RANK (the same), PET_NPROC_PER_NODE (spec.nprocPerNode: a number, or auto/cpu/gpu, which the
 * operator counts as 1) and PET_NNODES (the replicas; with an elasticPolicy a range {@code min:max} instead). A job
 * with an elasticPolicy and no Master gives PET_RDZV_ENDPOINT ({@code <job>-worker-0:port}) and no rank: the pod's
 * index then comes from its host name, {@code <job>-worker-<i>}. The same variables without PET_* are what Volcano's
 * pytorch plugin and a hand-written pod give: one rank per pod.
 *
 * <p>Each pod is one node: {@code bin/fleetrun} in it starts PET_NPROC_PER_NODE ranks ({@link Placement.Nodes}).
 */
@AutoService(ClusterEnvironment.class)
public final class PyTorchJobEnvironment implements ClusterEnvironment {
    public static final String NAME = "PyTorchJob (Kubeflow training-operator)";
    private static final Pattern WORKER_HOST = Pattern.compile(".+-worker-(\\d+)");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 30;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("WORLD_SIZE") || vars.has("PET_NNODES") || vars.has("PET_NODE_RANK") || vars.has("PET_NPROC_PER_NODE")
                || vars.has("RANK") && vars.has("MASTER_ADDR");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        Integer nproc = vars.has("PET_NPROC_PER_NODE") && vars.string("PET_NPROC_PER_NODE").matches("\\d+")
                ? Integer.valueOf(vars.positive("PET_NPROC_PER_NODE")) : null;
        int world = vars.positive("WORLD_SIZE");
        int nodes = vars.has("PET_NNODES") ? nodes(vars) : nproc == null ? world : vars.evenShare(world, "WORLD_SIZE", nproc,
                "PET_NPROC_PER_NODE");
        int perNode = nproc == null ? 1 : nproc;
        if (nodes * perNode != world) {
            throw vars.error("WORLD_SIZE=" + world + " is not PET_NNODES=" + nodes + " x " + perNode + " rank(s) per node"
                    + (nproc == null ? " (the operator counts PET_NPROC_PER_NODE " + vars.string("PET_NPROC_PER_NODE", "unset")
                    + " as 1)" : " (PET_NPROC_PER_NODE)"));
        }
        int node = nodeRank(vars, nodes);
        String master = master(vars);
        if (master == null && nodes > 1) {
            throw vars.error("environment variable MASTER_ADDR is not set: WORLD_SIZE=" + world + " ranks on " + nodes
                    + " pods need the master's address (the operator sets MASTER_ADDR and MASTER_PORT when the job has a"
                    + " Master replica; set FLEET_MASTER=host:port otherwise)");
        }
        return new Placement.Nodes(NAME, nodes, node, nproc, master, List.of(), vars.string("FLEET_HOST", null),
                vars.jobId(), vars.read());
    }

    /** PET_NNODES: a number, or an elastic range min:max, which fleetrun can only run when min = max. */
    private static int nodes(EnvVars vars) {
        String value = vars.string("PET_NNODES");
        String[] range = value.split(":", -1);
        if (range.length == 2 && range[0].matches("\\d+") && range[0].equals(range[1])) {
            return Integer.parseInt(range[0]);
        }
        if (range.length == 2) {
            throw vars.error("PET_NNODES=" + value + " is an elastic range of pods; Fleet4J needs a fixed number: set the"
                    + " elasticPolicy's minReplicas and maxReplicas to the same value");
        }
        return vars.positive("PET_NNODES");
    }

    /** PET_NODE_RANK, else RANK, else the index in a worker's host name (elastic jobs without a Master). */
    private static int nodeRank(EnvVars vars, int nodes) {
        if (vars.has("PET_NODE_RANK")) {
            int node = vars.index("PET_NODE_RANK", nodes, "PET_NNODES");
            if (vars.has("RANK") && vars.integer("RANK") != node) {
                throw vars.error("RANK=" + vars.integer("RANK") + " disagrees with PET_NODE_RANK=" + node);
            }
            return node;
        }
        if (vars.has("RANK")) {
            return vars.index("RANK", nodes, "the number of pods");
        }
        Matcher m = WORKER_HOST.matcher(vars.string("HOSTNAME", ""));
        if (vars.has("PET_RDZV_ENDPOINT") && m.matches() && Integer.parseInt(m.group(1)) < nodes) {
            return Integer.parseInt(m.group(1));
        }
        throw vars.error("environment variable RANK is not set, and neither is PET_NODE_RANK: this pod's index is not"
                + " known (an elastic job without a Master gives it in the host name <job>-worker-<i>, HOSTNAME="
                + vars.string("HOSTNAME", "unset") + ")");
    }

    private static String master(EnvVars vars) {
        String master = vars.masterOrNull();
        if (master != null) {
            return master;
        }
        if (vars.has("PET_MASTER_ADDR")) {
            return vars.string("PET_MASTER_ADDR") + ":" + vars.port("PET_MASTER_PORT");
        }
        return vars.string("PET_RDZV_ENDPOINT", null);
    }
}
