package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The same --servers and --workers lists on two hosts: each launcher takes its own processes and Paddle's variables. */
class ParameterServerHostsTest {
    private static final String SERVERS = "10.0.0.1:7000,10.0.0.2:7000";
    private static final String WORKERS = "10.0.0.1:7001,10.0.0.1:7002,10.0.0.2:7001,10.0.0.2:7002";

    @Test
    void eachHostStartsTheProcessesWhoseIpIsItsOwn() {
        for (int host = 0; host < 2; host++) {
            String own = "10.0.0." + (host + 1);
            ParameterServerHosts hosts = ParameterServerHosts.of(SERVERS, WORKERS, own::equals);
            assertEquals(List.of(host), hosts.servers().local(), "host " + own + " starts server " + host);
            ClusterLayout trainers = hosts.trainers();
            assertEquals(2, trainers.nnodes());
            assertEquals(host, trainers.nodeRank());
            assertEquals(2, trainers.nprocPerNode());
            assertEquals("10.0.0.1:7001", trainers.master().toString(), "trainer 0 hosts the trainers' store");

            Map<String, String> trainer = RankEnvironment.of(trainers, hosts.servers(), DeviceSelection.parse(null, 2), 1,
                    "job", Path.of("/tmp"), LogLevel.INFO, null);
            assertEquals("" + (2 * host + 1), trainer.get("PADDLE_TRAINER_ID"));
            assertEquals("4", trainer.get("PADDLE_TRAINERS_NUM"));
            assertEquals(WORKERS, trainer.get("PADDLE_TRAINER_ENDPOINTS"));
            assertEquals(own + ":7002", trainer.get("PADDLE_CURRENT_ENDPOINT"));
            assertEquals(SERVERS, trainer.get("PADDLE_PSERVERS_IP_PORT_LIST"));
            assertEquals("TRAINER", trainer.get("TRAINING_ROLE"));

            Map<String, String> server = RankEnvironment.server(trainers, hosts.servers(), host, "job", Path.of("/tmp"),
                    LogLevel.INFO, null);
            assertEquals("PSERVER", server.get("TRAINING_ROLE"));
            assertEquals(own, server.get("POD_IP"));
            assertEquals("7000", server.get("PADDLE_PORT"));
            assertEquals("4", server.get("PADDLE_TRAINERS_NUM"));
            assertEquals(SERVERS, server.get("PADDLE_PSERVERS_IP_PORT_LIST"));
        }
    }

    @Test
    void aHostWithServersButNoTrainerIsNamed() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> ParameterServerHosts.of("10.0.0.3:7000", "10.0.0.1:7001", "10.0.0.3"::equals));
        assertTrue(e.getMessage().contains("--workers lists no trainer on this host (10.0.0.3)"), e.getMessage());
    }
}
