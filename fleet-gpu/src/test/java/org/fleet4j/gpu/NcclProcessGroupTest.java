package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Proxy;
import java.time.Duration;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ProcessGroups;
import org.fleet4j.collective.Role;
import org.fleet4j.core.device.DeviceUnavailableException;
import org.junit.jupiter.api.Test;

/** What opening an NCCL group checks before any GPU work; its collectives themselves are GPU-only (GpuExecutorTest). */
class NcclProcessGroupTest {
    @Test
    void theHostGroupMustBeOneOfFleet4jsGroups() {
        ProcessGroup foreign = (ProcessGroup) Proxy.newProxyInstance(ProcessGroup.class.getClassLoader(),
                new Class<?>[]{ProcessGroup.class}, (proxy, method, args) -> method.getName().equals("name") ? "mpi" : null);
        var e = assertThrows(IllegalArgumentException.class, () -> NcclProcessGroup.over(foreign, null));
        assertEquals("NCCL group over 'mpi': the host group must be one of Fleet4J's process groups (it supplies the"
                + " rendezvous store)", e.getMessage());
    }

    @Test
    void withoutNcclOpeningNamesTheMissingLibrary() {
        boolean nccl;
        try {
            CudaLoader.require(CudaLibrary.NCCL);
            nccl = true;
        } catch (DeviceUnavailableException e) {
            nccl = false;
        }
        assumeTrue(!nccl, "NCCL loads here: the refusal is for machines without it");
        try (ProcessGroup host = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(Duration.ofSeconds(20)))) {
            var e = assertThrows(DeviceUnavailableException.class, () -> NcclProcessGroup.over(host, null));
            assertTrue(e.getMessage().contains(".so"), e.getMessage());
        }
    }

    @Test
    void aDeviceSegmentCarriesTheAddressAndLengthOnly() {
        var s = NcclProcessGroup.deviceSegment(0x7f00_0000_1000L, 4096);
        assertEquals(0x7f00_0000_1000L, s.address());
        assertEquals(4096, s.byteSize());
    }
}
