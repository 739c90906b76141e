package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class LaunchShapeAndPropertiesTest {
    @Test
    void archFromComputeCapability() {
        assertEquals("sm_90", new DeviceProperties(0, "NVIDIA H100", 9, 0, 80L << 30, 132).arch());
        assertEquals("sm_80", new DeviceProperties(1, "A100", 8, 0, 40L << 30, 108).arch());
        assertEquals("gpu:0 NVIDIA H100 (sm_90, 132 SMs, 80.00 GiB)",
                new DeviceProperties(0, "NVIDIA H100", 9, 0, 80L << 30, 132).toString());
        assertEquals(List.of("--gpu-architecture=sm_90", "--std=c++17", "-default-device"), NvrtcCompiler.options("sm_90"));
    }

    @Test
    void gridsCoverTheElementsUpToAFewWaves() {
        assertEquals(new LaunchShape(1, 1, 256, 0), LaunchShape.elements(0, 132));
        assertEquals(new LaunchShape(4, 1, 256, 0), LaunchShape.elements(1000, 132));
        assertEquals(new LaunchShape(32 * 132, 1, 256, 0), LaunchShape.elements(1L << 32, 132));
        assertEquals(new LaunchShape(64, 1, 256, 0), LaunchShape.rows(64));
        assertThrows(IllegalArgumentException.class, () -> LaunchShape.rows(1L << 33));
    }

    @Test
    void versions() {
        assertEquals("13.1", GpuRuntime.version(13010));
        assertEquals("12.8", GpuRuntime.version(12080));
    }
}
