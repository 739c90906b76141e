package org.fleet4j.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevicesTest {
    @Test
    void gpuWithoutProviderSaysWhatToPutOnTheClasspath() {
        var e = assertThrows(DeviceUnavailableException.class, () -> Devices.find("gpu"));
        assertTrue(e.getMessage().startsWith("no GPU support on the classpath: device 'gpu' needs the fleet4j-gpu jar"),
                e.getMessage());
        assertTrue(e.getMessage().contains("org.bytedeco:cuda"), e.getMessage());
    }

    @Test
    void badNamesAreExplained() {
        var e = assertThrows(IllegalArgumentException.class, () -> Devices.find("tpu"));
        assertEquals("unknown device 'tpu'; expected one of [cpu] optionally followed by :<index>, e.g. gpu:1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Devices.find("gpu:x"));
        assertTrue(e.getMessage().contains("index after ':'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Devices.find("cpu:1"));
        assertTrue(e.getMessage().contains("one cpu device"), e.getMessage());
    }

    @Test
    void providersAreFoundThroughTheServiceLoader(@TempDir Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(DeviceProvider.class.getName()), FakeGpuProvider.class.getName() + "\n");
        try (URLClassLoader loader = new URLClassLoader(new URL[]{dir.toUri().toURL()}, getClass().getClassLoader())) {
            assertSame(Devices.cpu(), Devices.find("gpu:1", loader, "device"));
            assertEquals(1, FakeGpuProvider.opened);
            var e = assertThrows(DeviceUnavailableException.class, () -> Devices.find("gpu:2", loader, "FLEET_DEVICE"));
            assertEquals("FLEET_DEVICE 'gpu:2' asked for, but this machine has 2 gpu devices (gpu:0..gpu:1)", e.getMessage());
            var unknown = assertThrows(IllegalArgumentException.class, () -> Devices.find("npu", loader, "device"));
            assertTrue(unknown.getMessage().contains("[cpu, gpu]"), unknown.getMessage());
        }
    }

    @Test
    void aBrokenProviderEntryIsReported(@TempDir Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(DeviceProvider.class.getName()), "org.example.MissingProvider\n");
        try (URLClassLoader loader = new URLClassLoader(new URL[]{dir.toUri().toURL()}, getClass().getClassLoader())) {
            var e = assertThrows(DeviceUnavailableException.class, () -> Devices.find("gpu", loader, "device"));
            assertTrue(e.getMessage().contains("org.example.MissingProvider"), e.getMessage());
        }
    }
}
