package org.fleet4j.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class DeviceAssignmentTest {
    @Test
    void cpuByDefault() {
        DeviceAssignment a = DeviceAssignment.parse(null, null).resolve(0);
        assertEquals(3, a.ranksPerNode(3));
        assertEquals("cpu", a.deviceOf(2));
    }

    @Test
    void devicesGpuMeansOneRankPerVisibleGpu() {
        DeviceAssignment a = DeviceAssignment.parse("gpu", null).resolve(4);
        assertEquals(List.of(0, 1, 2, 3), a.ordinals());
        assertEquals(4, a.ranksPerNode(1));
        assertEquals("gpu:3", a.deviceOf(3));
    }

    @Test
    void gpusListsTheGpusInRankOrder() {
        DeviceAssignment a = DeviceAssignment.parse(null, "2, 0").resolve(3);
        assertEquals(2, a.ranksPerNode(8));
        assertEquals("gpu:2", a.deviceOf(0));
        assertEquals("gpu:0", a.deviceOf(1));
    }

    @Test
    void mistakesAreNamed() {
        assertEquals("--gpus '0,a': 'a' is not a GPU index; expected a comma-separated list such as 0,1",
                assertThrows(IllegalArgumentException.class, () -> DeviceAssignment.parse("gpu", "0,a")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DeviceAssignment.parse(null, "1,1"))
                .getMessage().contains("GPU 1 twice"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DeviceAssignment.parse("cpu", "0"))
                .getMessage().contains("contradicts --devices cpu"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DeviceAssignment.parse("tpu", null))
                .getMessage().contains("expected cpu or gpu"));
        assertEquals("--gpus lists GPU 2, but this machine shows 2 GPUs (0..1)",
                assertThrows(DeviceUnavailableException.class, () -> DeviceAssignment.parse(null, "0,2").resolve(2)).getMessage());
        assertTrue(assertThrows(DeviceUnavailableException.class, () -> DeviceAssignment.parse("gpu", null).resolve(0))
                .getMessage().contains("shows no GPU"));
    }
}
