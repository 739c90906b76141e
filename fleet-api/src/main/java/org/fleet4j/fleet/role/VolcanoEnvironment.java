package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.cluster.Role;

/**
 * A pod of a Volcano Job ({@code batch.volcano.sh/v1alpha1}) with the env and svc plugins
 * ({@code pkg/controllers/job/plugins/env/env.go}, {@code .../svc/svc.go}): VC_TASK_INDEX (and the older VK_TASK_INDEX)
 * is the pod's index within its task; for every task the svc plugin sets VC_&lt;TASK&gt;_HOSTS, each pod's
 * {@code <job>-<task>-<i>.<job>} (the task's name upper-cased, '-' as '_'), and VC_&lt;TASK&gt;_NUM, and gives each
 * pod that host name. Which task is this pod's follows from its host name (HOSTNAME, the first label of its entry),
 * or from the only task there is.
 *
 * <p>A task named {@code ps}, {@code pserver} or {@code server} holds parameter servers, listening at PADDLE_PORT
 * (default {@value #SERVER_PORT}); with one, every pod is one process: a server, or a trainer of the other task
 * ({@link Placement.Process}). Without one, the trainers' task is one node per pod ({@link Placement.Nodes}) and the
 * master its first pod, at MASTER_PORT (default {@value #MASTER_PORT}). Volcano's pytorch plugin, which sets
 * MASTER_ADDR, WORLD_SIZE and RANK itself, is read as {@link PyTorchJobEnvironment} reads them.
 */
@AutoService(ClusterEnvironment.class)
public final class VolcanoEnvironment implements ClusterEnvironment {
    public static final String NAME = "Volcano";
    static final int MASTER_PORT = 6170;
    static final int SERVER_PORT = 6000;
    private static final Pattern HOSTS = Pattern.compile("VC_(.+)_HOSTS");
    private static final Set<String> SERVER_TASKS = Set.of("PS", "PSERVER", "SERVER");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 25;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("VC_TASK_INDEX") || vars.has("VK_TASK_INDEX") || env.keySet().stream().anyMatch(k -> HOSTS.matcher(k).matches());
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        if (vars.has("WORLD_SIZE") && vars.has("RANK")) {
            Placement.Nodes p = (Placement.Nodes) new PyTorchJobEnvironment().placement(env);
            return new Placement.Nodes(NAME + " (pytorch plugin)", p.nnodes(), p.nodeRank(), p.nprocPerNode(), p.master(),
                    List.of(), p.host(), p.jobId(), p.variables());
        }
        Map<String, List<String>> tasks = new TreeMap<>();
        for (String key : new TreeMap<>(env).keySet()) {
            Matcher m = HOSTS.matcher(key);
            if (m.matches() && vars.has(key)) {
                List<String> hosts = List.of(vars.string(key).split(","));
                String num = "VC_" + m.group(1) + "_NUM";
                if (vars.has(num) && vars.integer(num) != hosts.size()) {
                    throw vars.error(num + "=" + vars.integer(num) + " but " + key + " lists " + hosts.size() + " host(s)");
                }
                tasks.put(m.group(1), hosts);
            }
        }
        if (tasks.isEmpty()) {
            throw vars.error("VC_TASK_INDEX is set but no VC_<TASK>_HOSTS: enable the job's svc plugin (spec.plugins:"
                    + " {env: [], svc: []}), which names every pod");
        }
        String indexVar = vars.has("VC_TASK_INDEX") ? "VC_TASK_INDEX" : "VK_TASK_INDEX";
        String own = ownTask(vars, tasks);
        int index = vars.index(indexVar, tasks.get(own).size(), "VC_" + own + "_NUM");
        String host = vars.string("FLEET_HOST", tasks.get(own).get(index));
        String jobId = vars.string("FLEET_JOB_ID", jobName(tasks.get(own).get(0)));
        List<String> servers = tasks.keySet().stream().filter(SERVER_TASKS::contains).toList();
        List<String> trainers = tasks.keySet().stream().filter(t -> !SERVER_TASKS.contains(t)).toList();
        if (servers.size() > 1 || trainers.size() != 1) {
            throw vars.error("the job's tasks are " + tasks.keySet() + "; Fleet4J runs one task of trainers, and at most one"
                    + " of parameter servers (named ps, pserver or server)");
        }
        List<String> trainerHosts = tasks.get(trainers.get(0));
        String master = vars.masterAt(trainerHosts.get(0), MASTER_PORT);
        if (servers.isEmpty()) {
            return new Placement.Nodes(NAME, trainerHosts.size(), index, null, master, trainerHosts, host, jobId, vars.read());
        }
        int port = vars.has("PADDLE_PORT") ? vars.port("PADDLE_PORT") : SERVER_PORT;
        List<String> endpoints = new ArrayList<>();
        tasks.get(servers.get(0)).forEach(h -> endpoints.add(h + ":" + port));
        Role role = own.equals(servers.get(0)) ? Role.server(index, endpoints, trainerHosts.size(), jobId, NAME)
                : Role.trainer(index, trainerHosts.size(), 0, 1, index, trainerHosts.size(), master, host, jobId, NAME)
                        .withServerEndpoints(endpoints);
        return new Placement.Process(NAME, role, vars.read());
    }

    /** The task whose hosts name this pod, by HOSTNAME; the only task when there is one. */
    private static String ownTask(EnvVars vars, Map<String, List<String>> tasks) {
        if (tasks.size() == 1) {
            return tasks.keySet().iterator().next();
        }
        String hostname = vars.string("HOSTNAME", "");
        for (Map.Entry<String, List<String>> task : tasks.entrySet()) {
            if (task.getValue().stream().anyMatch(h -> h.split("\\.", 2)[0].equalsIgnoreCase(hostname))) {
                return task.getKey();
            }
        }
        throw vars.error("the job has tasks " + tasks.keySet() + " and this pod's HOSTNAME="
                + (hostname.isEmpty() ? "(unset)" : hostname) + " is in none of their VC_<TASK>_HOSTS lists, so its task is"
                + " not known (the svc plugin gives each pod its host name; keep the pods' hostname unset)");
    }

    /** The job's name: the subdomain of {@code <job>-<task>-<i>.<job>}. */
    private static String jobName(String host) {
        String[] parts = host.split("\\.", 3);
        return (parts.length > 1 ? parts[1] : parts[0]).toLowerCase(Locale.ROOT);
    }
}
