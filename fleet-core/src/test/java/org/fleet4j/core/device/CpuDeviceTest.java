package org.fleet4j.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class CpuDeviceTest {
    private final Device cpu = Devices.cpu();

    @Test
    void copiesRoundTripAtAnOffset() {
        DeviceBuffer buffer = cpu.allocate(64);
        assertEquals(64, buffer.byteSize());
        assertEquals(0, buffer.address() % 64, "aligned like tensors");
        float[] values = {1.5f, -2f, 3.25f};
        cpu.copyFromHost(MemorySegment.ofArray(values), buffer, 16);
        cpu.synchronize();
        MemorySegment back = Arena.ofAuto().allocate(12);
        cpu.copyToHost(buffer, 16, back);
        assertArrayEquals(values, back.toArray(ValueLayout.JAVA_FLOAT));
        cpu.free(buffer);
    }

    @Test
    void outOfRangeCopiesNameTheRange() {
        DeviceBuffer buffer = cpu.allocate(8);
        var e = assertThrows(IndexOutOfBoundsException.class,
                () -> cpu.copyFromHost(MemorySegment.ofArray(new float[3]), buffer, 0));
        assertEquals("copy from host: bytes [0, 12) outside a 8-byte buffer on cpu", e.getMessage());
        e = assertThrows(IndexOutOfBoundsException.class, () -> cpu.copyToHost(buffer, 6, MemorySegment.ofArray(new byte[4])));
        assertTrue(e.getMessage().contains("[6, 10)"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> cpu.allocate(-1));
    }

    @Test
    void namesAndKind() {
        assertEquals("cpu", cpu.name());
        assertEquals("cpu", cpu.kind());
        assertEquals(0, cpu.ordinal());
        assertEquals(cpu, Devices.find(" CPU "));
    }
}
