package org.fleet4j.gpu;

import org.bytedeco.javacpp.Pointer;

/** A raw address (device memory, or host memory from a MemorySegment) in the form JavaCPP's bindings take. */
final class DevicePointer extends Pointer {
    DevicePointer(long address, long bytes) {
        this.address = address;
        this.limit = bytes;
        this.capacity = bytes;
    }
}
