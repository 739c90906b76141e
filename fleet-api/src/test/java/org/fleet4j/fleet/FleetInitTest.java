package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.FreePorts;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.fleet.role.UserDefinedRoleMaker;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;

/** Fleet.init in this JVM: a world of one, and the errors of a rendezvous that cannot complete. */
class FleetInitTest {
    private static final GroupOptions QUICK = GroupOptions.defaults().withTimeout(Duration.ofSeconds(2));
    /** The environment of a rank that a launcher gave its job token. */
    private static final Map<String, String> TOKEN = Map.of(JobToken.ENV, JobToken.random().text());
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    private PrintStream log() {
        return new PrintStream(log, true, StandardCharsets.UTF_8);
    }

    @Test
    void aWorldOfOneWorksWithoutALauncher() {
        try (Fleet fleet = Fleet.init(Role::single, new DistributedStrategy(), QUICK, log())) {
            assertEquals(0, fleet.workerIndex());
            assertEquals(1, fleet.workerNum());
            assertEquals(1, fleet.nodeNum());
            assertTrue(fleet.isFirstWorker());
            assertEquals(3.5, fleet.util().allReduce(3.5, ReduceOp.SUM));
            assertEquals(-2L, fleet.util().allReduce(-2L, ReduceOp.MIN));
            assertArrayEquals(new long[]{7}, fleet.util().allGather(7L));
            assertArrayEquals(new double[]{0.25}, fleet.util().allGather(0.25));
            assertArrayEquals(new double[]{1, 2}, fleet.util().allReduce(new double[]{1, 2}, ReduceOp.MAX));
            IllegalArgumentException avg = assertThrows(IllegalArgumentException.class,
                    () -> fleet.util().allReduce(3L, ReduceOp.AVG));
            assertEquals("avg of integers would truncate; reduce a double instead", avg.getMessage());
            fleet.barrierWorker();
            assertEquals(fleet.processGroup(), fleet.execContext().ring(Fleet.DEFAULT_RING));
            try (Fleet second = Fleet.init(Role::single, new DistributedStrategy(), QUICK, log())) {
                assertEquals(second.processGroup(), second.execContext().ring(Fleet.DEFAULT_RING),
                        "a second job in this JVM has its own ring 0");
                assertNotEquals(fleet.processGroup(), second.processGroup());
            }
            IllegalStateException missing = assertThrows(IllegalStateException.class,
                    () -> fleet.execContext().ring(5));
            assertTrue(missing.getMessage().startsWith("no process group at ring_id 5 (rings: [0]); this job did not open"
                    + " it: Fleet.init opens the rings"), missing.getMessage());
        }
        String printed = log.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("fleet: rank 0 of 1 (node 0 of 1, local rank 0 of 1) from no launcher"), printed);
        assertTrue(printed.contains("fleet: effective strategy for 1 node x 1 rank per node = 1 rank on cpu: defaults\n"
                + "  changed by rule: fuse_all_reduce_ops: true -> false"), printed);
    }

    @Test
    void rankZeroWaitingForAMissingRankFailsNamingIt() throws IOException {
        String master = "127.0.0.1:" + FreePorts.one();
        RuntimeException e = assertThrows(RuntimeException.class, () -> Fleet.init(
                UserDefinedRoleMaker.oneHost(0, 2, master, "lonely"), new DistributedStrategy(), QUICK, log(), false, TOKEN));
        assertTrue(e.getMessage().startsWith("Fleet.init: rank 0 of 2 could not rendezvous at " + master + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("job/node/1") && e.getMessage().contains("2000 ms"), e.getMessage());
    }

    @Test
    void aRankWhoseMasterNeverAppearsFailsNamingTheMaster() throws IOException {
        String master = "127.0.0.1:" + FreePorts.one();
        RuntimeException e = assertThrows(RuntimeException.class, () -> Fleet.init(
                UserDefinedRoleMaker.oneHost(1, 2, master, "lonely"), new DistributedStrategy(), QUICK, log(), false, TOKEN));
        assertTrue(e.getMessage().startsWith("Fleet.init: rank 1 of 2 could not rendezvous at " + master + ": no rendezvous"
                + " store at " + master + " after 2000 ms"), e.getMessage());
    }

    @Test
    void aRankOfSeveralWithoutAJobTokenIsRefusedBeforeTheRendezvous() throws IOException {
        String master = "127.0.0.1:" + FreePorts.one();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Fleet.init(
                UserDefinedRoleMaker.oneHost(1, 2, master, "lonely"), new DistributedStrategy(), QUICK, log(), false, Map.of()));
        assertTrue(e.getMessage().startsWith("no job token: a job of 2 processes needs the same secret in every process"),
                e.getMessage());
    }

    @Test
    void aParameterServerRoleNeedsAStrategyOfModePs() {
        Role server = Role.server(0, List.of("127.0.0.1:7000"), 2, "ps", "test");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Fleet.init(() -> server, new DistributedStrategy(), QUICK, log()));
        assertEquals("Fleet.init: this process is server 0 of 1 (127.0.0.1:7000) for 2 trainer(s) from test"
                + " (TRAINING_ROLE=PSERVER), but the strategy's mode is collective; parameter servers need mode ps"
                + " (set mode: ps in the strategy, e.g. bin/fleetrun --strategy ps.yaml)", e.getMessage());
    }

    @Test
    void aTrainerOfAJobWithServersNeedsAStrategyOfModePs() {
        Role trainer = Role.single().withServerEndpoints(List.of("127.0.0.1:7000"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Fleet.init(() -> trainer, new DistributedStrategy(), QUICK, log(), false, TOKEN));
        assertEquals("Fleet.init: this process is " + trainer.describe() + " in a job with 1 parameter server(s)"
                + " (PADDLE_PSERVERS_IP_PORT_LIST), but the strategy's mode is collective, which would train without"
                + " them; set mode: ps in the strategy (e.g. bin/fleetrun --strategy ps.yaml), or start no servers",
                e.getMessage());
    }

    @Test
    void aTrainerOfModePsNeedsServers() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Fleet.init(Role::single, new DistributedStrategy().mode(Mode.PS), QUICK, log(), false, TOKEN));
        assertEquals("Fleet.init: the strategy's mode is ps, but this process is " + Role.single().describe()
                + " in a job without parameter servers; start the job with bin/fleetrun --server_num S --worker_num W,"
                + " or set PADDLE_PSERVERS_IP_PORT_LIST", e.getMessage());
    }

    @Test
    void aParameterServerJobWithoutATokenIsRefusedSayingHowToMakeOne() {
        Role server = Role.server(0, List.of("127.0.0.1:7000"), 2, "ps", "Paddle launcher");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Fleet.init(() -> server,
                new DistributedStrategy().mode(Mode.PS), QUICK, log(), false, Map.of()));
        assertTrue(e.getMessage().startsWith("no job token: a job of 3 processes needs the same secret in every process"),
                e.getMessage());
        assertTrue(e.getMessage().contains(JobToken.HOW_TO_MAKE) && e.getMessage().contains("FLEET_INSECURE=1"), e.getMessage());
    }

    @Test
    void insecureOptsOutOfTheTokenWithAWarning() {
        Role server = Role.server(0, List.of("127.0.0.1:7000"), 2, "ps", "Paddle launcher");
        try (Fleet fleet = Fleet.init(() -> server, new DistributedStrategy().mode(Mode.PS), QUICK, log(), false,
                Map.of("FLEET_INSECURE", "1"))) {
            assertTrue(fleet.isServer());
        }
        String printed = log.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("fleet: WARNING: FLEET_INSECURE=1: this job of 3 processes runs without a job token"),
                printed);
    }

    @Test
    void theStrategyIsResolvedForTheDeviceTheLauncherGaveThisRank() {
        DistributedStrategy strategy = new DistributedStrategy();
        try (Fleet onGpu = Fleet.init(Role::single, strategy, QUICK, log(), true, Map.of("FLEET_DEVICE", "gpu:1"));
             Fleet onCpu = Fleet.init(Role::single, strategy, QUICK, log(), true, Map.of())) {
            assertEquals("gpu", onGpu.strategy().world().device());
            assertEquals("cpu", onCpu.strategy().world().device());
        }
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("= 1 rank on gpu"), log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aServerOfModePsJoinsNoGroupAndTrainerOnlyCallsNameTheRole() {
        Role server = Role.server(0, List.of("127.0.0.1:7000"), 2, "ps", "test");
        try (Fleet halfAsync = Fleet.init(() -> server, new DistributedStrategy().mode(Mode.PS), QUICK, log(), false,
                TOKEN);
             Fleet async = Fleet.init(() -> server, new DistributedStrategy().mode(Mode.PS)
                     .aSyncConfigs(c -> c.runtimeSplitSendRecv(true)), QUICK, log(), false, TOKEN);
             Fleet geo = Fleet.init(() -> server, new DistributedStrategy().mode(Mode.PS)
                     .aSyncConfigs(c -> c.kSteps(8)), QUICK, log(), false, TOKEN)) {
            assertEquals("half-async", halfAsync.psMode(), "Paddle's a_sync defaults to true");
            assertEquals("async", async.psMode());
            assertEquals("geo", geo.psMode());
        }
        try (Fleet fleet = Fleet.init(() -> server, new DistributedStrategy().mode(Mode.PS).aSync(false), QUICK, log(),
                false, TOKEN)) {
            assertTrue(fleet.isServer());
            assertEquals(false, fleet.isWorker());
            assertEquals("grpc", fleet.protocol());
            assertEquals("sync", fleet.psMode());
            IllegalStateException util = assertThrows(IllegalStateException.class, fleet::util);
            assertEquals("Fleet.util: server 0 of 1 (127.0.0.1:7000) for 2 trainer(s) from test is a parameter server,"
                    + " which joins no group of trainers", util.getMessage());
            IllegalStateException init = assertThrows(IllegalStateException.class, fleet::initWorker);
            assertTrue(init.getMessage().startsWith("Fleet.initWorker: server 0 of 1"), init.getMessage());
            IllegalStateException noPlan = assertThrows(IllegalStateException.class, () -> fleet.initServer(null));
            assertTrue(noPlan.getMessage().startsWith("Fleet.initServer: no parameter-server plan yet; call"
                    + " fleet.distributedOptimizer(optimizer).minimize(loss) first"), noPlan.getMessage());
        }
    }

    @Test
    void serverCallsInCollectiveModeNameTheMode() {
        try (Fleet fleet = Fleet.init(Role::single, new DistributedStrategy(), QUICK, log())) {
            assertEquals("none", fleet.protocol());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> fleet.initServer(null));
            assertEquals("Fleet.initServer is for parameter-server mode, but the strategy's mode is collective; set"
                    + " mode: ps in the strategy", e.getMessage());
        }
    }

    @Test
    void fleetTimeoutIsWholeSeconds() {
        assertEquals(GroupOptions.DEFAULT_TIMEOUT, Fleet.timeout(null));
        assertEquals(Duration.ofSeconds(7), Fleet.timeout(" 7 "));
        for (String bad : new String[]{"0", "2.5", "soon"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Fleet.timeout(bad));
            assertEquals("environment variable FLEET_TIMEOUT='" + bad + "' is not a whole number of seconds (at least 1)",
                    e.getMessage());
        }
    }
}
