package org.fleet4j.fleet.role;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.fleet4j.cluster.Role;
import org.fleet4j.text.Quoted;

/**
 * Paddle's parameter-server variables, read as Paddle's role maker reads them: TRAINING_ROLE (TRAINER, the default, or
 * PSERVER), PADDLE_PSERVERS_IP_PORT_LIST (every server's ip:port, in server-index order) and, for a server, its own
 * endpoint POD_IP:PADDLE_PORT, whose position in the list is its server index. PADDLE_TRAINERS_NUM counts the trainers.
 */
final class ParameterServerVariables {
    static final String TRAINING_ROLE = "TRAINING_ROLE";
    static final String SERVER_LIST = "PADDLE_PSERVERS_IP_PORT_LIST";

    private ParameterServerVariables() {
    }

    /** The server's role when TRAINING_ROLE is PSERVER, else the trainer's, with the servers it talks to. */
    static Role role(EnvVars vars, Supplier<Role> trainer) {
        return kind(vars) == Role.Kind.PSERVER ? server(vars) : withServers(vars, trainer.get());
    }

    private static Role.Kind kind(EnvVars vars) {
        String value = vars.string(TRAINING_ROLE, Role.Kind.TRAINER.name());
        try {
            return Role.Kind.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(vars.launcher() + ": environment variable " + TRAINING_ROLE + "=" + Quoted.of(value)
                    + " is neither TRAINER nor PSERVER");
        }
    }

    private static Role withServers(EnvVars vars, Role trainer) {
        return vars.has(SERVER_LIST) ? trainer.withServerEndpoints(serverEndpoints(vars)) : trainer;
    }

    /** The role of the server at POD_IP:PADDLE_PORT. */
    private static Role server(EnvVars vars) {
        List<String> endpoints = serverEndpoints(vars);
        int workers = vars.positive("PADDLE_TRAINERS_NUM");
        String own = vars.string("POD_IP") + ":" + vars.port("PADDLE_PORT");
        int index = endpoints.indexOf(own);
        if (index < 0) {
            throw new IllegalArgumentException(vars.launcher() + ": this server's endpoint POD_IP:PADDLE_PORT=" + own
                    + " is not in " + SERVER_LIST + "=" + String.join(",", endpoints)
                    + "; a server's POD_IP and PADDLE_PORT must name one of the listed endpoints");
        }
        return Role.server(index, endpoints, workers, vars.jobId(), vars.launcher());
    }

    private static List<String> serverEndpoints(EnvVars vars) {
        List<String> endpoints = new ArrayList<>();
        for (String entry : vars.string(SERVER_LIST).split(",", -1)) {
            String endpoint = entry.trim();
            int colon = endpoint.lastIndexOf(':');
            String port = colon < 0 ? "" : endpoint.substring(colon + 1);
            if (colon <= 0 || !port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException(vars.launcher() + ": " + SERVER_LIST + " entry " + Quoted.of(endpoint)
                        + " is not ip:port (port 1..65535); expected e.g. 10.0.0.1:6000,10.0.0.2:6000");
            }
            if (endpoints.contains(endpoint)) {
                throw new IllegalArgumentException(vars.launcher() + ": " + SERVER_LIST + " lists " + endpoint
                        + " twice; every server needs its own ip:port");
            }
            endpoints.add(endpoint);
        }
        return endpoints;
    }
}
