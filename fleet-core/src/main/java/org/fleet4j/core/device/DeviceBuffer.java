package org.fleet4j.core.device;

/** A block of memory on one device. On a GPU the address is a device pointer that only kernels may dereference. */
public interface DeviceBuffer {
    Device device();

    long address();

    long byteSize();
}
