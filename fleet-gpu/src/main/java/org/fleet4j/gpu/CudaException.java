package org.fleet4j.gpu;

/** A CUDA, cuBLAS, NVRTC or NCCL call failed; the message names the call, the device and the library's own words. */
public final class CudaException extends RuntimeException {
    public CudaException(String message) {
        super(message);
    }
}
