package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A pod of a JobSet ({@code jobset.x-k8s.io/v1alpha2}): its Jobs are Indexed Jobs, so Kubernetes sets
 * JOB_COMPLETION_INDEX, the pod's index within its Job; with {@code network.enableDNSHostnames} (the default) each pod
 * is reachable as {@code <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>}, the subdomain being
 * {@code network.subdomain} or the JobSet's name. JobSet puts the rest in the pod's labels
 * ({@code jobset.sigs.k8s.io/jobset-name}, {@code /replicatedjob-name}, {@code /job-index},
 * {@code /replicatedjob-replicas}), which a manifest passes in with the downward API as JOBSET_NAME,
 * REPLICATED_JOB_NAME, JOB_INDEX and REPLICATED_JOB_REPLICAS, and the pods of each Job (its parallelism) as
 * PODS_PER_JOB (docs/examples/kubernetes/jobset.yaml). JOBSET_SUBDOMAIN overrides the subdomain.
 *
 * <p>Each pod is one node ({@link Placement.Nodes}), numbered job by job: node = JOB_INDEX x PODS_PER_JOB +
 * JOB_COMPLETION_INDEX; the master is pod 0 of job 0 at MASTER_PORT (default {@value #MASTER_PORT}).
 */
@AutoService(ClusterEnvironment.class)
public final class JobSetEnvironment implements ClusterEnvironment {
    public static final String NAME = "JobSet";
    static final int MASTER_PORT = 6170;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 40;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("JOBSET_NAME") || vars.has("JOB_COMPLETION_INDEX");
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        if (!vars.has("JOBSET_NAME")) {
            throw vars.error("JOB_COMPLETION_INDEX=" + vars.string("JOB_COMPLETION_INDEX") + " is set (an Indexed Job's pod)"
                    + " but JOBSET_NAME is not: pass the pod's JobSet labels in with the downward API, as"
                    + " docs/examples/kubernetes/jobset.yaml does, or set FLEET_MASTER, --nnodes and --rank yourself");
        }
        String jobset = vars.string("JOBSET_NAME");
        String job = vars.string("REPLICATED_JOB_NAME");
        int replicas = vars.positive("REPLICATED_JOB_REPLICAS");
        int jobIndex = vars.index("JOB_INDEX", replicas, "REPLICATED_JOB_REPLICAS");
        int pods = vars.positive("PODS_PER_JOB");
        int podIndex = vars.index("JOB_COMPLETION_INDEX", pods, "PODS_PER_JOB");
        String subdomain = vars.string("JOBSET_SUBDOMAIN", jobset);
        List<String> hosts = new ArrayList<>();
        for (int j = 0; j < replicas; j++) {
            for (int p = 0; p < pods; p++) {
                hosts.add(jobset + "-" + job + "-" + j + "-" + p + "." + subdomain);
            }
        }
        int node = jobIndex * pods + podIndex;
        String master = vars.masterAt(hosts.get(0), MASTER_PORT);
        return new Placement.Nodes(NAME, hosts.size(), node, null, master, hosts, vars.string("FLEET_HOST", hosts.get(node)),
                vars.string("FLEET_JOB_ID", jobset), vars.read());
    }
}
