package org.fleet4j.launch;

import java.util.List;
import java.util.stream.IntStream;

/**
 * The parameter servers of a job: every server's endpoint in server-index order (what the processes get as
 * PADDLE_PSERVERS_IP_PORT_LIST) and which of them this node starts.
 *
 * @param endpoints every server of the job
 * @param local indexes into {@code endpoints} of the servers this node starts
 */
public record ServerLayout(List<HostPort> endpoints, List<Integer> local) {
    public ServerLayout {
        endpoints = List.copyOf(endpoints);
        local = List.copyOf(local);
        for (int index : local) {
            if (index < 0 || index >= endpoints.size()) {
                throw new IllegalArgumentException("server " + index + " is outside 0.." + (endpoints.size() - 1));
            }
        }
        if (endpoints.stream().distinct().count() != endpoints.size()) {
            throw new IllegalArgumentException("two servers share an endpoint: " + endpoints);
        }
    }

    /** A collective job: no servers. */
    public static ServerLayout none() {
        return new ServerLayout(List.of(), List.of());
    }

    /** Every server runs on this node. */
    public static ServerLayout allHere(List<HostPort> endpoints) {
        return new ServerLayout(endpoints, IntStream.range(0, endpoints.size()).boxed().toList());
    }

    public boolean isEmpty() {
        return endpoints.isEmpty();
    }

    /**
     * FLEET_PS_ENDPOINT_MAP, the grpc++ data port of every server: the port {@code S} after its own (the run of
     * ports after the servers'), on its host. An {@code .endpoint_map} file in the working directory overrides it.
     */
    public String dataEndpointMap() {
        return String.join(",", endpoints.stream().map(e -> e + "=" + e.host() + ":" + (e.port() + endpoints.size()))
                .toList());
    }

    /** PADDLE_PSERVERS_IP_PORT_LIST. */
    public String endpointList() {
        return String.join(",", endpoints.stream().map(HostPort::toString).toList());
    }
}
