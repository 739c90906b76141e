package org.fleet4j.fleet.role;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.junit.jupiter.api.Test;

class RoleMakersTest {
    private static Map<String, String> fleetrun(int rank) {
        Map<String, String> env = new HashMap<>(Map.of("FLEET_RANK", "" + rank, "FLEET_WORLD_SIZE", "4",
                "FLEET_LOCAL_RANK", "" + rank % 2, "FLEET_LOCAL_WORLD_SIZE", "2", "FLEET_NODE_RANK", "" + rank / 2,
                "FLEET_NNODES", "2", "FLEET_MASTER", "10.0.0.1:6170", "FLEET_HOST", "10.0.0.2", "FLEET_JOB_ID", "job7"));
        // fleetrun also sets Paddle's variables; its own must win
        env.putAll(Map.of("PADDLE_TRAINER_ID", "" + rank, "PADDLE_TRAINERS_NUM", "4"));
        return env;
    }

    private static String error(Map<String, String> env) {
        return assertThrows(IllegalArgumentException.class, () -> new EnvironmentRoleMaker(env).role()).getMessage();
    }

    @Test
    void noLauncherIsAWorldOfOne() {
        Role role = new EnvironmentRoleMaker(Map.of("PATH", "/bin")).role();
        assertEquals(0, role.rank());
        assertEquals(1, role.worldSize());
        assertEquals(1, role.nodeNum());
        assertNull(role.master());
        assertTrue(role.isFirst());
    }

    @Test
    void fleetrunVariables() {
        EnvironmentRoleMaker maker = new EnvironmentRoleMaker(fleetrun(3));
        assertInstanceOf(FleetRunEnvironment.class, maker.detect());
        assertEquals(Role.trainer(3, 4, 1, 2, 1, 2, "10.0.0.1:6170", "10.0.0.2", "job7", "fleetrun"), maker.role());
    }

    @Test
    void fleetrunMissingOrInconsistentVariablesAreNamed() {
        Map<String, String> env = fleetrun(1);
        env.remove("FLEET_MASTER");
        assertTrue(error(env).contains("FLEET_MASTER is not set"), error(env));

        env = fleetrun(1);
        env.remove("FLEET_LOCAL_WORLD_SIZE");
        assertEquals("fleetrun: environment variable FLEET_LOCAL_WORLD_SIZE is not set", error(env));

        env = fleetrun(1);
        env.put("FLEET_RANK", "one");
        assertEquals("fleetrun: environment variable FLEET_RANK='one' is not an integer", error(env));

        env = fleetrun(1);
        env.put("FLEET_RANK", "4");
        assertEquals("fleetrun: environment variable FLEET_RANK=4 is outside 0..3 (FLEET_WORLD_SIZE=4)", error(env));

        env = fleetrun(1);
        env.put("FLEET_NODE_RANK", "1");
        assertEquals("fleetrun: FLEET_RANK=1 is not FLEET_NODE_RANK=1 x FLEET_LOCAL_WORLD_SIZE=2 + FLEET_LOCAL_RANK=1",
                error(env));

        env = fleetrun(1);
        env.put("FLEET_NNODES", "3");
        env.put("FLEET_NODE_RANK", "0");
        assertEquals("fleetrun: FLEET_NNODES=3 x FLEET_LOCAL_WORLD_SIZE=2 is not FLEET_WORLD_SIZE=4", error(env));
    }

    @Test
    void paddleLauncherVariables() {
        Map<String, String> env = Map.of("PADDLE_TRAINER_ID", "2", "PADDLE_TRAINERS_NUM", "3",
                "PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6170,10.0.0.1:6171,10.0.0.2:6170",
                "PADDLE_CURRENT_ENDPOINT", "10.0.0.2:6170", "PADDLE_RANK_IN_NODE", "0");
        Role role = new EnvironmentRoleMaker(env).role();
        assertEquals(Role.trainer(2, 3, 0, 1, 1, 2, "10.0.0.1:6170", "10.0.0.2", "fleet4j", "Paddle launcher"), role);
    }

    @Test
    void paddleLauncherInconsistencies() {
        Map<String, String> env = new HashMap<>(Map.of("PADDLE_TRAINER_ID", "1", "PADDLE_TRAINERS_NUM", "3",
                "PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6170,10.0.0.1:6171"));
        assertEquals("Paddle launcher: PADDLE_TRAINER_ENDPOINTS lists 2 endpoints but PADDLE_TRAINERS_NUM=3", error(env));

        env.put("PADDLE_TRAINERS_NUM", "2");
        env.put("PADDLE_CURRENT_ENDPOINT", "10.0.0.1:6170");
        assertEquals("Paddle launcher: PADDLE_CURRENT_ENDPOINT=10.0.0.1:6170 is not entry 1 (PADDLE_TRAINER_ID) of "
                + "PADDLE_TRAINER_ENDPOINTS, which is 10.0.0.1:6171", error(env));

        env.put("PADDLE_CURRENT_ENDPOINT", "10.0.0.1:6171");
        env.put("PADDLE_RANK_IN_NODE", "0");
        assertEquals("Paddle launcher: PADDLE_RANK_IN_NODE=0 but PADDLE_TRAINER_ENDPOINTS puts rank 1 at local rank 1"
                + " on 10.0.0.1", error(env));

        env.remove("PADDLE_TRAINER_ENDPOINTS");
        assertEquals("Paddle launcher: environment variable PADDLE_TRAINER_ENDPOINTS is not set", error(env));
    }

    @Test
    void torchrunVariables() {
        Map<String, String> env = Map.of("RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4",
                "GROUP_RANK", "1", "MASTER_ADDR", "node0", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "run1");
        assertEquals(Role.trainer(5, 8, 1, 4, 1, 2, "node0:29500", "127.0.0.1", "run1", "torchrun"),
                new EnvironmentRoleMaker(env).role());
    }

    @Test
    void torchrunNeedsBothMasterVariables() {
        Map<String, String> env = Map.of("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2",
                "MASTER_ADDR", "node0");
        assertEquals("torchrun: MASTER_PORT is not set, but MASTER_ADDR is; set both", error(env));
        Map<String, String> noMaster = Map.of("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2");
        assertTrue(error(noMaster).startsWith("torchrun: a world of 2 ranks needs the rendezvous address: set FLEET_MASTER"),
                error(noMaster));
        Map<String, String> uneven = Map.of("RANK", "1", "WORLD_SIZE", "3", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2");
        assertTrue(error(uneven).startsWith("torchrun: WORLD_SIZE=3 ranks do not split evenly over LOCAL_WORLD_SIZE=2"),
                error(uneven));
    }

    @Test
    void openMpiVariables() {
        Map<String, String> env = Map.of("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "2", "FLEET_MASTER", "h0:7000");
        assertEquals(Role.trainer(3, 4, 1, 2, 1, 2, "h0:7000", "127.0.0.1", "fleet4j", "Open MPI"),
                new EnvironmentRoleMaker(env).role());
        Map<String, String> noMaster = Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_COMM_WORLD_LOCAL_RANK", "0", "OMPI_COMM_WORLD_LOCAL_SIZE", "2");
        assertTrue(error(noMaster).contains("set FLEET_MASTER=host:port, or MASTER_ADDR and MASTER_PORT"), error(noMaster));
    }

    /** What Paddle's launcher gives a parameter server: its own endpoint is POD_IP:PADDLE_PORT. */
    private static Map<String, String> paddleServer(String podIp, String port) {
        return new HashMap<>(Map.of("TRAINING_ROLE", "PSERVER", "PADDLE_PSERVERS_IP_PORT_LIST",
                "10.0.0.1:6000,10.0.0.2:6000,10.0.0.2:6001", "POD_IP", podIp, "PADDLE_PORT", port,
                "PADDLE_TRAINERS_NUM", "4", "FLEET_JOB_ID", "ctr"));
    }

    @Test
    void paddleServerFindsItsIndexInTheServerList() {
        Role role = new EnvironmentRoleMaker(paddleServer("10.0.0.2", "6001")).role();
        assertTrue(role.isServer());
        assertFalse(role.isWorker());
        assertEquals(Role.Kind.PSERVER, role.kind());
        assertEquals(2, role.serverIndex());
        assertEquals(3, role.serverNum());
        assertEquals("10.0.0.2:6001", role.serverEndpoint());
        assertEquals(List.of("10.0.0.1:6000", "10.0.0.2:6000", "10.0.0.2:6001"), role.serverEndpoints());
        assertEquals(4, role.workerNum());
        assertEquals("10.0.0.2", role.host());
        assertEquals(1, role.nodeRank(), "the second distinct host of the server list");
        assertEquals(1, role.localRank(), "the second server on 10.0.0.2");
        assertEquals("ctr", role.jobId());
        assertEquals("server 2 of 3 (10.0.0.2:6001) for 4 trainer(s) from Paddle launcher", role.describe());
        IllegalStateException noWorkerIndex = assertThrows(IllegalStateException.class, role::workerIndex);
        assertTrue(noWorkerIndex.getMessage().contains("has no worker index"), noWorkerIndex.getMessage());
    }

    @Test
    void paddleTrainerInParameterServerModeKnowsTheServers() {
        Map<String, String> env = Map.of("TRAINING_ROLE", "TRAINER", "PADDLE_TRAINER_ID", "1", "PADDLE_TRAINERS_NUM", "2",
                "PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6170,10.0.0.2:6170", "PADDLE_PSERVERS_IP_PORT_LIST",
                "10.0.0.1:6000,10.0.0.2:6000", "POD_IP", "10.0.0.2", "PADDLE_PORT", "6170");
        Role role = new EnvironmentRoleMaker(env).role();
        assertTrue(role.isWorker());
        assertEquals(1, role.workerIndex());
        assertEquals(2, role.workerNum());
        assertEquals(List.of("10.0.0.1:6000", "10.0.0.2:6000"), role.serverEndpoints());
        assertEquals(Role.trainer(1, 2, 0, 1, 1, 2, "10.0.0.1:6170", "10.0.0.2", "fleet4j", "Paddle launcher")
                .withServerEndpoints(List.of("10.0.0.1:6000", "10.0.0.2:6000")), role);
        assertThrows(IllegalStateException.class, role::serverIndex);
    }

    @Test
    void fleetrunTrainerAndServerReadTheSameVariables() {
        Map<String, String> trainer = fleetrun(3);
        trainer.putAll(Map.of("TRAINING_ROLE", "TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:7001"));
        Role role = new FleetRunEnvironment().placement(trainer).role();
        assertEquals(Role.Kind.TRAINER, role.kind());
        assertEquals(3, role.workerIndex());
        assertEquals(List.of("127.0.0.1:7001"), role.serverEndpoints());

        Map<String, String> server = Map.of("TRAINING_ROLE", "PSERVER", "PADDLE_PSERVERS_IP_PORT_LIST",
                "127.0.0.1:7001,127.0.0.1:7002", "POD_IP", "127.0.0.1", "PADDLE_PORT", "7002", "PADDLE_TRAINERS_NUM", "4");
        Role serverRole = new EnvironmentRoleMaker(server).role();
        assertEquals(1, serverRole.serverIndex());
        assertEquals(4, serverRole.workerNum());
    }

    @Test
    void collectiveTrainersAreTrainersWithNoServers() {
        Role role = new EnvironmentRoleMaker(fleetrun(0)).role();
        assertEquals(Role.Kind.TRAINER, role.kind());
        assertEquals(List.of(), role.serverEndpoints());
        assertEquals(Role.Kind.TRAINER, Role.single().kind());
    }

    @Test
    void badParameterServerVariablesAreNamed() {
        Map<String, String> env = paddleServer("10.0.0.2", "6001");
        env.put("TRAINING_ROLE", "WORKER");
        assertEquals("Paddle launcher: environment variable TRAINING_ROLE='WORKER' is neither TRAINER nor PSERVER", error(env));

        Map<String, String> trainer = fleetrun(1);
        trainer.put("TRAINING_ROLE", "HETER_TRAINER");
        assertEquals("fleetrun: environment variable TRAINING_ROLE='HETER_TRAINER' is neither TRAINER nor PSERVER",
                error(trainer));

        assertEquals("Paddle launcher: this server's endpoint POD_IP:PADDLE_PORT=10.0.0.3:6000 is not in"
                + " PADDLE_PSERVERS_IP_PORT_LIST=10.0.0.1:6000,10.0.0.2:6000,10.0.0.2:6001; a server's POD_IP and"
                + " PADDLE_PORT must name one of the listed endpoints", error(paddleServer("10.0.0.3", "6000")));

        assertEquals("Paddle launcher: environment variable PADDLE_PORT=0 is not a port (1..65535)",
                error(paddleServer("10.0.0.1", "0")));

        env = paddleServer("10.0.0.1", "6000");
        env.put("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6000,10.0.0.2");
        assertEquals("Paddle launcher: PADDLE_PSERVERS_IP_PORT_LIST entry '10.0.0.2' is not ip:port (port 1..65535);"
                + " expected e.g. 10.0.0.1:6000,10.0.0.2:6000", error(env));

        env.put("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6000,10.0.0.1:6000");
        assertEquals("Paddle launcher: PADDLE_PSERVERS_IP_PORT_LIST lists 10.0.0.1:6000 twice; every server needs its own"
                + " ip:port", error(env));

        env = paddleServer("10.0.0.1", "6000");
        env.remove("POD_IP");
        assertEquals("Paddle launcher: environment variable POD_IP is not set", error(env));

        env = paddleServer("10.0.0.1", "6000");
        env.remove("PADDLE_TRAINERS_NUM");
        assertEquals("Paddle launcher: environment variable PADDLE_TRAINERS_NUM is not set", error(env),
                "a lone TRAINING_ROLE still reaches Paddle's role maker, which names what is missing");
    }

    @Test
    void userDefinedRole() {
        RoleMaker maker = UserDefinedRoleMaker.oneHost(1, 2, "127.0.0.1:9000", "mine");
        assertEquals(1, maker.role().localRank());
        assertEquals("rank 1 of 2 (node 0 of 1, local rank 1 of 2) from user-defined role", maker.role().describe());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UserDefinedRoleMaker.oneHost(2, 2, "127.0.0.1:9000", "mine"));
        assertEquals("user-defined role: rank 2 is outside 0..1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> UserDefinedRoleMaker.oneHost(0, 2, null, "mine"));
        assertTrue(e.getMessage().contains("a world of 2 ranks needs the master's host:port"), e.getMessage());
    }
}
