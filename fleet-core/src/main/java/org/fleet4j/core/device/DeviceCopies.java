package org.fleet4j.core.device;

import java.lang.foreign.MemorySegment;

/** Argument checks shared by every device's copies, so each says what was out of range in the same words. */
public final class DeviceCopies {
    private DeviceCopies() {
    }

    /** Checks that {@code buffer} belongs to {@code device} and that bytes [offset, offset + length) lie inside it. */
    public static void checkRange(Device device, DeviceBuffer buffer, long offset, long length, String what) {
        if (buffer.device() != device) {
            throw new IllegalArgumentException(what + ": buffer belongs to " + buffer.device().name()
                    + ", not to " + device.name());
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IndexOutOfBoundsException(what + ": bytes [" + offset + ", " + (offset + length) + ") outside a "
                    + buffer.byteSize() + "-byte buffer on " + device.name());
        }
    }

    public static void checkCopyFromHost(Device device, MemorySegment src, DeviceBuffer dst, long dstOffset) {
        checkRange(device, dst, dstOffset, src.byteSize(), "copy from host");
    }

    public static void checkCopyToHost(Device device, DeviceBuffer src, long srcOffset, MemorySegment dst) {
        checkRange(device, src, srcOffset, dst.byteSize(), "copy to host");
    }
}
