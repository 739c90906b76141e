package org.fleet4j.collective;

/**
 * A block of one CUDA device's memory as the collective API sees it: the device, the raw address and length, and
 * the stream on which its contents are written (0 for the default stream), after whose work a collective must run.
 * The host never reads the bytes; a device layer adapts its own buffers to this.
 */
public record CudaBuffer(int device, long address, long byteSize, long stream) {
    public CudaBuffer {
        if (device < 0) {
            throw new IllegalArgumentException("CUDA device " + device + ": expected 0 or more");
        }
        if (address == 0 && byteSize > 0) {
            throw new IllegalArgumentException("a CUDA buffer of " + byteSize + " bytes on device " + device
                    + " at address 0");
        }
        if (byteSize < 0) {
            throw new IllegalArgumentException("a CUDA buffer of " + byteSize + " bytes on device " + device);
        }
    }

    @Override
    public String toString() {
        return byteSize + " bytes on cuda:" + device;
    }
}
