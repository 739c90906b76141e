package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.collective.nccl.NcclLibrary;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.ExecContext;
import org.junit.jupiter.api.Test;

/**
 * Without a GPU: which group the GPU executor's collectives of a ring run on. Host groups are real single-rank groups
 * in a job's {@link ExecContext} as {@code Fleet.init} puts them there; opening their device backend is recorded
 * instead of done (NCCL itself needs a GPU: GpuExecutorTest, NcclOneRankTest).
 */
class RingGroupsTest {
    private static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(20));

    /** Records the host groups whose device backend was opened. */
    private static final class RecordingOpener {
        final List<ProcessGroup> hosts = new ArrayList<>();

        void open(ProcessGroup host) {
            hosts.add(host);
        }
    }

    @Test
    void theVariableNamesNcclOrHost() {
        assertEquals(RingGroups.Mode.NCCL, RingGroups.Mode.parse(null));
        assertEquals(RingGroups.Mode.NCCL, RingGroups.Mode.parse(""));
        assertEquals(RingGroups.Mode.NCCL, RingGroups.Mode.parse(" NCCL "));
        assertEquals(RingGroups.Mode.HOST, RingGroups.Mode.parse("host"));
        var e = assertThrows(IllegalArgumentException.class, () -> RingGroups.Mode.parse("mpi"));
        assertEquals("FLEET_GPU_COLLECTIVES='mpi': expected 'nccl' (collectives on the GPU through NCCL, the default) or"
                + " 'host' (through the ring's host process group)", e.getMessage());
    }

    @Test
    void aRingOfFleetRunsOnItsHostGroupsDeviceBackendUntilAnotherFleetTakesTheRing() {
        int ring = 9101;
        RecordingOpener opener = new RecordingOpener();
        try (ProcessGroup first = ProcessGroups.init(Role.single(), OPTIONS);
             ProcessGroup second = ProcessGroups.init(Role.single(), OPTIONS)) {
            ExecContext[] job = {ExecContext.none()};
            RingGroups groups = new RingGroups(RingGroups.Mode.NCCL, r -> RingGroups.hostRing(job[0], r), opener::open);
            assertNull(groups.groupFor(ring), "the context has no such ring: the host path names it");
            job[0] = ExecContext.builder().ring(ring, first).build();
            assertSame(first, groups.groupFor(ring));
            assertEquals(List.of(first), opener.hosts);
            job[0] = ExecContext.builder().ring(ring, second).build(); // a new Fleet on the same ring id
            assertSame(second, groups.groupFor(ring));
            assertEquals(List.of(first, second), opener.hosts);
        }
    }

    @Test
    void aRingThisRankIsNotAMemberOfStaysOnTheHostPath() {
        int ring = 9102;
        RecordingOpener opener = new RecordingOpener();
        ExecContext job = ExecContext.builder()
                .notMember(ring, "the node leaders [0, 2] of hierarchical allreduce, communicator 0").build();
        RingGroups groups = new RingGroups(RingGroups.Mode.NCCL, r -> RingGroups.hostRing(job, r), opener::open);
        assertNull(groups.groupFor(ring));
        assertEquals(List.of(), opener.hosts);
    }

    @Test
    void hostModeOpensNothingAndAttachedGroupsWinInEitherMode() {
        int ring = 9103;
        RecordingOpener opener = new RecordingOpener();
        try (ProcessGroup host = ProcessGroups.init(Role.single(), OPTIONS);
             ProcessGroup mine = ProcessGroups.init(Role.single(), OPTIONS)) {
            ExecContext job = ExecContext.builder().ring(ring, host).build();
            RingGroups hostMode = new RingGroups(RingGroups.Mode.HOST, r -> RingGroups.hostRing(job, r), opener::open);
            assertNull(hostMode.groupFor(ring));
            hostMode.attach(ring, mine);
            assertSame(mine, hostMode.groupFor(ring));
            RingGroups ncclMode = new RingGroups(RingGroups.Mode.NCCL, r -> RingGroups.hostRing(job, r), opener::open);
            ncclMode.attach(ring, mine);
            assertSame(mine, ncclMode.groupFor(ring));
            assertEquals(List.of(), opener.hosts, "an attached group opens its device backend on first use");
        }
    }

    /** The real opener: without NCCL (this machine) the error names the ring, the library and the way out. */
    @Test
    void withoutNcclTheErrorNamesTheRingTheLibraryAndTheHostMode() {
        boolean nccl;
        try {
            NcclLibrary.require();
            nccl = true;
        } catch (CollectiveException e) {
            nccl = false;
        }
        assumeTrue(!nccl, "NCCL loads here: the refusal is for machines without it");
        int ring = 9104;
        try (ProcessGroup host = ProcessGroups.init(Role.single(), OPTIONS)) {
            ExecContext job = ExecContext.builder().ring(ring, host).build();
            RingGroups groups = new RingGroups(RingGroups.Mode.NCCL, r -> RingGroups.hostRing(job, r),
                    h -> h.deviceBackend(0));
            var e = assertThrows(ExecutionException.class, () -> groups.groupFor(ring));
            assertTrue(e.getMessage().startsWith("ring_id 9104: the device backend of cuda:0 on group '"
                    + host.name() + "' (rank 0 of 1): the nccl backend cannot "), e.getMessage());
            assertTrue(e.getMessage().contains(".so"), "names the missing library: " + e.getMessage());
            assertTrue(e.getMessage().endsWith("Set FLEET_GPU_COLLECTIVES=host to reduce through the host group"
                    + " instead"), e.getMessage());
        }
    }

    /**
     * mnist's two-rank program prepared as the GPU runner prepares it: ring 0's allreduces and broadcasts go to Fleet's
     * ring 0 group and its device backend, shared by the startup and the main program; nothing takes the host path.
     */
    @Test
    void theTwoRankTrainingStepOpensOneGroupForRingZeroAndFallsBackNowhere() {
        RecordingOpener opener = new RecordingOpener();
        Mlp net = MlpPrograms.build(new int[]{784, 512, 512, 10}, "sgd", 2, MlpPrograms.allFusions());
        try (ProcessGroup host = ProcessGroups.init(Role.single(), OPTIONS)) {
            ExecContext job = ExecContext.builder().ring(0, host).build();
            RingGroups groups = new RingGroups(RingGroups.Mode.NCCL, r -> RingGroups.hostRing(job, r), opener::open);
            GpuPlan startup = new GpuPlan(net.startup(), null, List.of(), groups::groupFor, job);
            GpuPlan main = new GpuPlan(net.main(), null, List.of(), groups::groupFor, job);
            assertEquals(Set.of(), main.hostOps);
            assertTrue(!startup.hostOps.contains("c_broadcast"), "startup: " + startup.hostOps);
            assertEquals(List.of(host), opener.hosts.stream().distinct().toList());
            assertTrue(main.groupsCurrent(groups::groupFor));
        }
    }
}
