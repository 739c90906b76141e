package org.fleet4j.fleet.role;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.fleet4j.text.Quoted;

/**
 * The role from Paddle's launcher ({@code python -m paddle.distributed.launch}), and from operators that set its
 * variables (PaddleFlow's paddle-operator). TRAINING_ROLE says which kind of process this is. A trainer reads
 * PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ENDPOINTS and PADDLE_CURRENT_ENDPOINT; nodes are the distinct
 * hosts of the endpoints in order, and rank 0's endpoint hosts the rendezvous store unless FLEET_MASTER says
 * otherwise. A parameter server reads PADDLE_PSERVERS_IP_PORT_LIST, POD_IP, PADDLE_PORT and PADDLE_TRAINERS_NUM
 * ({@link ParameterServerVariables}). A lone TRAINING_ROLE selects it too, so a server missing its other variables is
 * told which.
 */
@AutoService(ClusterEnvironment.class)
public final class PaddleLauncherEnvironment implements ClusterEnvironment {
    public static final String NAME = "Paddle launcher";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int order() {
        return 10;
    }

    @Override
    public boolean isPresent(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        return vars.has("PADDLE_TRAINERS_NUM") || vars.has("PADDLE_TRAINER_ENDPOINTS")
                || vars.has(ParameterServerVariables.TRAINING_ROLE);
    }

    @Override
    public Placement placement(Map<String, String> env) {
        EnvVars vars = new EnvVars(env, NAME);
        Role role = ParameterServerVariables.role(vars, () -> trainer(vars));
        return new Placement.Process(NAME, role, vars.read());
    }

    private static Role trainer(EnvVars vars) {
        int world = vars.positive("PADDLE_TRAINERS_NUM");
        int rank = vars.index("PADDLE_TRAINER_ID", world, "PADDLE_TRAINERS_NUM");
        if (world == 1 && !vars.has("PADDLE_TRAINER_ENDPOINTS")) {
            return Role.trainer(0, 1, 0, 1, 0, 1, null, "127.0.0.1", vars.jobId(), NAME);
        }
        List<String> endpoints = List.of(vars.string("PADDLE_TRAINER_ENDPOINTS").split(","));
        if (endpoints.size() != world) {
            throw vars.error("PADDLE_TRAINER_ENDPOINTS lists " + endpoints.size() + " endpoints but PADDLE_TRAINERS_NUM="
                    + world);
        }
        List<String> hosts = new ArrayList<>();
        for (String e : endpoints) {
            hosts.add(host(e.trim()));
        }
        String current = vars.string("PADDLE_CURRENT_ENDPOINT", endpoints.get(rank).trim());
        if (!current.equals(endpoints.get(rank).trim())) {
            throw vars.error("PADDLE_CURRENT_ENDPOINT=" + current + " is not entry " + rank
                    + " (PADDLE_TRAINER_ID) of PADDLE_TRAINER_ENDPOINTS, which is " + endpoints.get(rank).trim());
        }
        String host = hosts.get(rank);
        List<String> nodes = hosts.stream().distinct().toList();
        int localWorld = (int) hosts.stream().filter(host::equals).count();
        int localRank = (int) hosts.subList(0, rank).stream().filter(host::equals).count();
        if (vars.has("PADDLE_RANK_IN_NODE") && vars.integer("PADDLE_RANK_IN_NODE") != localRank) {
            throw vars.error("PADDLE_RANK_IN_NODE=" + vars.integer("PADDLE_RANK_IN_NODE") + " but PADDLE_TRAINER_ENDPOINTS"
                    + " puts rank " + rank + " at local rank " + localRank + " on " + host);
        }
        String master = vars.string("FLEET_MASTER", endpoints.get(0).trim());
        return Role.trainer(rank, world, localRank, localWorld, nodes.indexOf(host), nodes.size(), master, host, vars.jobId(),
                NAME);
    }

    private static String host(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException(NAME + ": PADDLE_TRAINER_ENDPOINTS entry " + Quoted.of(endpoint)
                    + " is not host:port");
        }
        return endpoint.substring(0, colon);
    }
}
