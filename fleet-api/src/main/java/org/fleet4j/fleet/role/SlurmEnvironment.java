package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;

/**
 * A task of a Slurm job step ({@code srun}): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES,
 * the step's nodes (SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, in Slurm's compact form, {@link SlurmHostList}) and
 * their tasks (SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE, which may differ from node to node: {@code 2(x3),1}).
 * The master is the first node, at MASTER_PORT or 12000 + SLURM_JOB_ID mod 20000 (so two jobs sharing a node meet at
 * different ports), unless FLEET_MASTER or MASTER_ADDR say otherwise.
 *
 * <p>A step of one task per node is one launcher per node ({@link Placement.Nodes}: {@code srun --ntasks-per-node=1
 * bin/fleetrun --nproc_per_node N}); otherwise each task is one rank, placed block by block
 * ({@code --distribution=block}, Slurm's default). Where the nodes run different numbers of tasks, each task is its
 * own node to the collective: the ranks still train together, over TCP.
 */
@AutoService(ClusterEnvironment.class)
public final class SlurmEnvironment implements ClusterEnvironment {
    public static final String NAME = "Slurm";
    static final int BASE_PORT = 12000;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 50;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("SLURM_JOB_ID") || vars.has("SLURM_JOBID") || vars.has("SLURM_PROCID");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        String jobId = vars.string("SLURM_JOB_ID", vars.string("SLURM_JOBID", vars.jobId()));
        if (!vars.has("SLURM_PROCID")) {
            throw vars.error("environment variable SLURM_PROCID is not set: this process runs in Slurm job " + jobId
                    + " but not as a task of a job step; start it with srun (e.g. srun --ntasks=2 bin/fleetrun mnist)");
        }
        String tasksVar = first(vars, "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS");
        int world = vars.positive(tasksVar);
        int rank = vars.index("SLURM_PROCID", world, tasksVar);
        String listVar = first(vars, "SLURM_JOB_NODELIST", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST");
        List<String> hosts = SlurmHostList.hosts(vars.string(listVar), listVar);
        String nodesVar = first(vars, "SLURM_NNODES", "SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES");
        int nodes = vars.has(nodesVar) ? vars.positive(nodesVar) : hosts.size();
        if (nodes != hosts.size()) {
            throw vars.error(nodesVar + "=" + nodes + " but " + listVar + " names " + hosts.size() + " node(s): " + hosts);
        }
        String perNodeVar = first(vars, "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
        List<Integer> perNode = SlurmHostList.tasksPerNode(vars.string(perNodeVar), perNodeVar);
        if (perNode.size() != nodes || perNode.stream().mapToInt(Integer::intValue).sum() != world) {
            throw vars.error(perNodeVar + "=" + vars.string(perNodeVar) + " gives " + perNode + " tasks to " + perNode.size()
                    + " node(s), but the step has " + world + " task(s) (" + tasksVar + ") on " + nodes + " node(s)");
        }
        int node = vars.index("SLURM_NODEID", nodes, nodesVar);
        int local = vars.index("SLURM_LOCALID", perNode.get(node), perNodeVar + " for node " + node);
        int before = perNode.subList(0, node).stream().mapToInt(Integer::intValue).sum();
        if (before + local != rank) {
            throw vars.error("SLURM_PROCID=" + rank + " is not the " + before + " task(s) of the nodes before SLURM_NODEID="
                    + node + " + SLURM_LOCALID=" + local + "; use the block distribution (srun --distribution=block)");
        }
        String master = vars.masterAt(hosts.get(0), BASE_PORT + (int) (numeric(jobId) % 20000));
        String host = vars.string("FLEET_HOST", hosts.get(node));
        if (perNode.stream().allMatch(t -> t == 1)) {
            return new Placement.Nodes(NAME, nodes, node, null, master, hosts, host, jobId, vars.read());
        }
        boolean even = perNode.stream().distinct().count() == 1;
        Role role = even ? Role.trainer(rank, world, local, perNode.get(node), node, nodes, master, host, jobId, NAME)
                : Role.trainer(rank, world, 0, 1, rank, world, master, host, jobId, NAME);
        return new Placement.Process(NAME, role, vars.read());
    }

    /** The first of {@code names} that is set, else {@code missing} (whose absence the error then names). */
    private static String first(EnvVars vars, String missing, String... names) {
        for (String name : names) {
            if (vars.has(name)) {
                return name;
            }
        }
        return missing;
    }

    private static long numeric(String jobId) {
        String digits = jobId.replaceAll("\\D", "");
        return digits.isEmpty() ? 0 : Long.parseLong(digits.substring(Math.max(0, digits.length() - 9)));
    }
}
