package org.fleet4j.launch;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * {@code --servers ip:port,... --workers ip:port,...}: a parameter-server job on several hosts, as Paddle's launch_ps
 * takes it. The same lists go to the launcher on every host; each starts the servers and trainers whose ip is one of
 * its own addresses. Server i is entry i of {@code --servers}, trainer i entry i of {@code --workers}.
 *
 * <p>The trainers form the data-parallel world of a {@link ClusterLayout}, so their entries must follow its layout:
 * listed host by host, the same number on every host, on consecutive ports from the same first port (e.g.
 * {@code 10.0.0.1:6170,10.0.0.1:6171,10.0.0.2:6170,10.0.0.2:6171}). Every host runs at least one trainer.
 *
 * @param trainers this host's part of the trainers' world
 * @param servers every server, and which of them run here
 */
record ParameterServerHosts(ClusterLayout trainers, ServerLayout servers) {
    /** Parses and checks the lists against the addresses of this machine. */
    static ParameterServerHosts of(String servers, String workers) {
        Set<InetAddress> own = ClusterLayout.localAddresses();
        return of(servers, workers, host -> isOwn(host, own));
    }

    /** {@code isLocal} says whether a host of the lists is this machine. */
    static ParameterServerHosts of(String servers, String workers, Predicate<String> isLocal) {
        if (servers == null || workers == null) {
            throw new LaunchException((servers == null ? "--workers" : "--servers") + " needs "
                    + (servers == null ? "--servers" : "--workers") + " too: parameter servers on several hosts take both"
                    + " lists (the same on every host)");
        }
        List<HostPort> serverList = endpoints(servers, "--servers");
        List<HostPort> workerList = endpoints(workers, "--workers");
        Set<HostPort> seen = new HashSet<>(serverList);
        for (HostPort w : workerList) {
            if (!seen.add(w)) {
                throw new LaunchException("--workers entry " + w + " is also in --servers; every process needs its own ip:port");
            }
        }
        Set<String> hosts = new LinkedHashSet<>();
        serverList.forEach(e -> hosts.add(e.host()));
        workerList.forEach(e -> hosts.add(e.host()));
        Set<String> local = new LinkedHashSet<>(hosts.stream().filter(isLocal).toList());
        if (local.isEmpty()) {
            throw new LaunchException("--servers/--workers: no host of theirs (" + String.join(", ", hosts) + ") is an"
                    + " address of this machine; run bin/fleetrun with the same lists on each of those hosts");
        }
        List<String> trainerHosts = workerList.stream().map(HostPort::host).distinct().toList();
        List<String> here = trainerHosts.stream().filter(local::contains).toList();
        if (here.size() != 1) {
            throw new LaunchException(here.isEmpty()
                    ? "--workers lists no trainer on this host (" + String.join(", ", local) + "); fleetrun runs at least"
                            + " one trainer on every host of --servers and --workers"
                    : "--workers lists trainers on " + here + ", which are all this machine; give each host one address");
        }
        List<Integer> localServers = IntStream.range(0, serverList.size())
                .filter(i -> local.contains(serverList.get(i).host())).boxed().toList();
        if (localServers.stream().anyMatch(i -> !serverList.get(i).host().equals(here.getFirst()))) {
            throw new LaunchException("--servers lists servers on " + local + ", which are all this machine; use the"
                    + " address its trainers have in --workers (" + here.getFirst() + ")");
        }
        int perHost = (int) workerList.stream().filter(w -> w.host().equals(here.getFirst())).count();
        ClusterLayout layout = ClusterLayout.plan(trainerHosts, null, trainerHosts.indexOf(here.getFirst()), null,
                workerList.getFirst().port(), perHost);
        List<String> expected = layout.allEndpoints().orElseThrow();
        if (!expected.equals(workerList.stream().map(HostPort::toString).toList())) {
            throw new LaunchException("--workers " + workers + ": fleetrun needs the same number of trainers on every"
                    + " host, listed host by host, on consecutive ports from the same first port, e.g. "
                    + String.join(",", expected));
        }
        return new ParameterServerHosts(layout, new ServerLayout(serverList, localServers));
    }

    private static List<HostPort> endpoints(String list, String flag) {
        List<HostPort> out = new ArrayList<>();
        for (String entry : list.split(",", -1)) {
            HostPort e = HostPort.parse(entry.strip(), flag + " entry");
            if (out.contains(e)) {
                throw new LaunchException(flag + " lists " + e + " twice; every process needs its own ip:port");
            }
            out.add(e);
        }
        return out;
    }

    private static boolean isOwn(String host, Set<InetAddress> own) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a.isLoopbackAddress() || own.contains(a)) {
                    return true;
                }
            }
            return false;
        } catch (UnknownHostException e) {
            throw new LaunchException("--servers/--workers: cannot resolve host '" + host + "'", e);
        }
    }
}
