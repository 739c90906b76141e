package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.grpc.Shards;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.junit.jupiter.api.Test;

/** DeepRec's variables: defaults, values, bad values named with what is allowed; threads really pinned. */
class NetworkSettingsTest {
    @Test
    void defaultsAreDeepRecsWhereTheCpusAllow() {
        assertEquals(new NetworkSettings(8, false, true),
                NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.SERVER, 20, 64));
        assertEquals(new NetworkSettings(3, false, true),
                NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.SERVER, 3, 64));
        assertEquals(new NetworkSettings(2, false, true),
                NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.WORKER, 5, 64));
        assertEquals(new NetworkSettings(1, false, true),
                NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.WORKER, 1, 64));
    }

    @Test
    void theDefaultIsNoMoreThreadsThanCpusButASetVariableWins() {
        assertEquals(2, NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.SERVER, 4, 2).threads());
        assertEquals(1, NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.SERVER, 4, 1).threads());
        assertEquals(5, NetworkSettings.fromEnvironment(Map.of("NETWORK_PS_CORE_NUMBER", "5"),
                NetworkSettings.Side.SERVER, 8, 2).threads());
        int cpus = Runtime.getRuntime().availableProcessors();
        assertEquals(Math.min(8, cpus),
                NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.SERVER, 20).threads(),
                "the CPUs this JVM may run on: " + cpus);
    }

    @Test
    void eachSideReadsItsOwnVariables() {
        Map<String, String> env = Map.of("NETWORK_PS_CORE_NUMBER", "5", "PS_ENABLE_POLLING", "true",
                "PS_DISABLE_PIN_CORES", "1", "NETWORK_WORKER_CORE_NUMBER", "3", "WORKER_ENABLE_POLLING", "0",
                "WORKER_DISABLE_PIN_CORES", "FALSE");
        assertEquals(new NetworkSettings(5, true, false),
                NetworkSettings.fromEnvironment(env, NetworkSettings.Side.SERVER, 1));
        assertEquals(new NetworkSettings(3, false, true),
                NetworkSettings.fromEnvironment(env, NetworkSettings.Side.WORKER, 1));
        assertEquals("5 network threads, busy polling, not pinned",
                NetworkSettings.fromEnvironment(env, NetworkSettings.Side.SERVER, 1).describe());
    }

    @Test
    void aWorkerRunsNoNetworkThreadsWhereTheJobsProcessesFillTheHostsCpus() {
        // what bin/fleetrun gives worker 0 of 1 server x 2 workers on one host
        Map<String, String> env = Map.of("FLEET_LOCAL_WORLD_SIZE", "2", "POD_IP", "127.0.0.1",
                "PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:6170");
        assertEquals(3, NetworkSettings.processesOnHost(env));
        assertEquals(0, NetworkSettings.fromEnvironment(env, NetworkSettings.Side.WORKER, 2, 2).threads());
        assertEquals(0, NetworkSettings.fromEnvironment(env, NetworkSettings.Side.WORKER, 2, 3).threads());
        assertEquals(2, NetworkSettings.fromEnvironment(env, NetworkSettings.Side.WORKER, 2, 4).threads(),
                "a CPU to spare");
        assertEquals(2, NetworkSettings.fromEnvironment(env, NetworkSettings.Side.SERVER, 2, 2).threads(),
                "a server keeps its threads: they own its tables");
        // servers on other hosts do not count
        Map<String, String> apart = Map.of("FLEET_LOCAL_WORLD_SIZE", "2", "POD_IP", "10.0.0.1",
                "PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.2:6170,10.0.0.1:6170,10.0.0.3:6170");
        assertEquals(3, NetworkSettings.processesOnHost(apart));
        assertEquals(1, NetworkSettings.processesOnHost(Map.of()), "a process started by hand counts itself");
        assertEquals(0, NetworkSettings.fromEnvironment(Map.of(), NetworkSettings.Side.WORKER, 2, 1).threads(),
                "one CPU: a network thread would only share it");
        // a set variable wins
        Map<String, String> set = new HashMap<>(env);
        set.put("NETWORK_WORKER_CORE_NUMBER", "2");
        assertEquals(2, NetworkSettings.fromEnvironment(set, NetworkSettings.Side.WORKER, 2, 2).threads());
        assertEquals("", NetworkSettings.whyNoWorkerThreads(set,
                NetworkSettings.fromEnvironment(set, NetworkSettings.Side.WORKER, 2, 2)));
        set.put("NETWORK_WORKER_CORE_NUMBER", "0");
        assertEquals("", NetworkSettings.whyNoWorkerThreads(set,
                NetworkSettings.fromEnvironment(set, NetworkSettings.Side.WORKER, 2, 2)));
        assertTrue(NetworkSettings.whyNoWorkerThreads(env, new NetworkSettings(0, false, true))
                .startsWith("; none by default: the job's 3 processes on this host fill its "), "the reason is said");
    }

    @Test
    void aWorkerMayRunNoNetworkThreads() {
        NetworkSettings none = NetworkSettings.fromEnvironment(Map.of("NETWORK_WORKER_CORE_NUMBER", "0",
                "WORKER_ENABLE_POLLING", "1"), NetworkSettings.Side.WORKER, 4);
        assertEquals(new NetworkSettings(0, true, true), none);
        assertEquals("no network threads (each calling thread does its own I/O), busy polling", none.describe());
    }

    @Test
    void aBadValueNamesTheVariableAndTheAllowedValues() {
        assertEquals("NETWORK_PS_CORE_NUMBER='four' is not a number of network threads; allowed: a whole number from 1"
                + " to 256", bad(Map.of("NETWORK_PS_CORE_NUMBER", "four"), NetworkSettings.Side.SERVER));
        assertEquals("NETWORK_PS_CORE_NUMBER='0' is not a number of network threads; allowed: a whole number from 1"
                + " to 256", bad(Map.of("NETWORK_PS_CORE_NUMBER", "0"), NetworkSettings.Side.SERVER));
        assertEquals("NETWORK_WORKER_CORE_NUMBER='-1' is not a number of network threads; allowed: a whole number from"
                + " 0 to 256 (0: no network threads, the calling threads do the I/O)",
                bad(Map.of("NETWORK_WORKER_CORE_NUMBER", "-1"), NetworkSettings.Side.WORKER));
        assertEquals("WORKER_ENABLE_POLLING='yes' is not allowed; allowed: true, false, 1 or 0",
                bad(Map.of("WORKER_ENABLE_POLLING", "yes"), NetworkSettings.Side.WORKER));
        assertEquals("PS_DISABLE_PIN_CORES='2' is not allowed; allowed: true, false, 1 or 0",
                bad(Map.of("PS_DISABLE_PIN_CORES", "2"), NetworkSettings.Side.SERVER));
    }

    private static String bad(Map<String, String> env, NetworkSettings.Side side) {
        return assertThrows(IllegalArgumentException.class, () -> NetworkSettings.fromEnvironment(env, side, 4))
                .getMessage();
    }

    @Test
    void pinnedThreadsAreConfinedToTheirCoreByTheOs() throws Exception {
        assertTrue(CorePinning.available(), "Linux has sched_setaffinity");
        List<Integer> cpus = CorePinning.allowedCpus();
        PsOptions options = Shards.options(JobToken.random());
        try (GrpcppServer server = Loopback.serve(Shards.shard(), options, new NetworkSettings(2, true, true));
             PsConnection c = Loopback.connect(server, options)) {
            Map<Integer, Integer> pinned = server.pinnedThreads();
            assertEquals(2, pinned.size(), "both network threads pinned: " + pinned);
            for (Map.Entry<Integer, Integer> e : pinned.entrySet()) {
                assertTrue(cpus.contains(e.getValue()), "pinned to an allowed CPU: " + e);
                assertEquals(String.valueOf(e.getValue()), cpusAllowed(e.getKey()), "thread " + e.getKey()
                        + " as the OS sees it");
            }
            assertEquals(Shards.DIM, Shards.pullSparse(c, "emb", Shards.ids(1, 2, 3), 3, Shards.DIM).length / 3,
                    "busy-polling, pinned threads serve");
        }
        try (GrpcppServer unpinned = Loopback.serve(Shards.shard(), options, new NetworkSettings(2, false, false))) {
            assertTrue(unpinned.pinnedThreads().isEmpty(), "PS_DISABLE_PIN_CORES: nothing pinned");
        }
    }

    /** The thread's Cpus_allowed_list in /proc. */
    private static String cpusAllowed(int tid) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status")).stream()
                .filter(l -> l.startsWith("Cpus_allowed_list:")).map(l -> l.substring(l.indexOf(':') + 1).strip())
                .findFirst().orElseThrow();
    }
}
