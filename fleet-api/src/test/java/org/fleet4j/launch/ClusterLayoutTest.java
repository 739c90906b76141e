package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Rank numbering, endpoints and master of multi-node jobs, which the process tests only see on one host. */
class ClusterLayoutTest {
    @Test
    void secondNodeOfIpsGetsTheGlobalRanksAfterNodeZero() {
        ClusterLayout layout = ClusterLayout.plan(List.of("10.0.0.1", "10.0.0.2"), null, 1, null, null, 2);

        assertEquals(4, layout.worldSize());
        assertEquals(2, layout.globalRank(0));
        assertEquals(3, layout.globalRank(1));
        assertEquals("10.0.0.2", layout.host());
        assertEquals(new HostPort("10.0.0.1", ClusterLayout.DEFAULT_START_PORT), layout.master());
        assertEquals(Optional.of(List.of("10.0.0.1:6170", "10.0.0.1:6171", "10.0.0.2:6170", "10.0.0.2:6171")), layout.allEndpoints());
    }

    @Test
    void environmentOfARankOnTheSecondNode() {
        ClusterLayout layout = ClusterLayout.plan(List.of("10.0.0.1", "10.0.0.2"), 2, 1, "10.0.0.9:7000", 8000, 2);
        Map<String, String> env = RankEnvironment.of(layout, ServerLayout.none(), new DeviceSelection(List.of(4, 5)), 1, "job", Path.of("/logs"),
                LogLevel.DEBUG, Path.of("/s.yaml"));

        assertEquals("3", env.get("FLEET_RANK"));
        assertEquals("1", env.get("FLEET_LOCAL_RANK"));
        assertEquals("1", env.get("FLEET_NODE_RANK"));
        assertEquals("2", env.get("FLEET_NNODES"));
        assertEquals("4", env.get("FLEET_WORLD_SIZE"));
        assertEquals("10.0.0.9:7000", env.get("FLEET_MASTER"));
        assertEquals("10.0.0.2", env.get("FLEET_HOST"));
        assertEquals("5", env.get("FLEET_DEVICE_ID"));
        assertEquals("gpu:5", env.get("FLEET_DEVICE"));
        assertEquals("debug", env.get("FLEET_LOG_LEVEL"));
        assertEquals("/s.yaml", env.get("FLEET_STRATEGY"));
        assertEquals("3", env.get("PADDLE_TRAINER_ID"));
        assertEquals("4", env.get("PADDLE_TRAINERS_NUM"));
        assertEquals("10.0.0.2:8001", env.get("PADDLE_CURRENT_ENDPOINT"));
        assertEquals("10.0.0.1:8000,10.0.0.1:8001,10.0.0.2:8000,10.0.0.2:8001", env.get("PADDLE_TRAINER_ENDPOINTS"));
        assertEquals("1", env.get("PADDLE_RANK_IN_NODE"));
        assertEquals("TRAINER", env.get("TRAINING_ROLE"));
    }

    @Test
    void nodesListedOnTheSameHostGiveEveryRankItsOwnEndpoint() {
        List<String> ips = List.of("127.0.0.1", "10.0.0.2", "127.0.0.1");
        List<String> expected = List.of("127.0.0.1:7000", "127.0.0.1:7001", "10.0.0.2:7000", "10.0.0.2:7001",
                "127.0.0.1:7002", "127.0.0.1:7003");
        for (int node = 0; node < 3; node++) {
            ClusterLayout layout = ClusterLayout.plan(ips, null, node, null, 7000, 2);
            Map<String, String> env = RankEnvironment.of(layout, ServerLayout.none(), DeviceSelection.CPU, 1, "j", Path.of("/l"), LogLevel.INFO, null);

            assertEquals(String.join(",", expected), env.get("PADDLE_TRAINER_ENDPOINTS"), "node " + node);
            assertEquals(expected.get(2 * node + 1), env.get("PADDLE_CURRENT_ENDPOINT"), "node " + node);
            assertEquals(new HostPort("127.0.0.1", 7000), layout.master());
        }
        LaunchException e = assertThrows(LaunchException.class,
                () -> ClusterLayout.plan(List.of("127.0.0.1", "127.0.0.1"), null, 0, null, 65534, 2));
        assertTrue(e.getMessage().startsWith("--start_port 65534: 2 nodes on one host of --ips need ports 65534..65537"), e.getMessage());
    }

    @Test
    void masterWithoutIpsFindsTheLocalAddressTowardsIt() {
        ClusterLayout layout = ClusterLayout.plan(null, 3, 2, "127.0.0.1:6170", null, 1);

        assertEquals(2, layout.globalRank(0));
        assertEquals(3, layout.worldSize());
        assertEquals("127.0.0.1", layout.host());
        assertEquals(ClusterLayout.DEFAULT_START_PORT, layout.startPort());
        assertEquals(Optional.empty(), layout.allEndpoints(), "the other nodes' hosts are not known here");
        assertTrue(RankEnvironment.of(layout, ServerLayout.none(), DeviceSelection.CPU, 0, "j", Path.of("/l"), LogLevel.INFO, null)
                .get("PADDLE_TRAINER_ENDPOINTS") == null);
    }

    @Test
    void singleNodePicksFreeConsecutivePortsAndHostsTheMasterAtTheFirst() {
        ClusterLayout layout = ClusterLayout.plan(null, null, null, null, null, 3);

        assertEquals(new HostPort("127.0.0.1", layout.startPort()), layout.master());
        assertEquals(new HostPort("127.0.0.1", layout.startPort() + 2), layout.endpoint(2));
    }
}
