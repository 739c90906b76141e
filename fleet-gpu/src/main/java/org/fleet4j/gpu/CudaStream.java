package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cudaStreamCreateWithFlags;
import static org.bytedeco.cuda.global.cudart.cudaStreamDestroy;
import static org.bytedeco.cuda.global.cudart.cudaStreamNonBlocking;
import static org.bytedeco.cuda.global.cudart.cudaStreamSynchronize;

import org.bytedeco.cuda.cudart.CUstream_st;

/** A CUDA stream: work issued on it runs in order; separate streams (compute, each communicator) overlap. */
public final class CudaStream implements AutoCloseable {
    private final String name;
    private final CUstream_st handle = new CUstream_st();

    /** A stream that does not synchronise with the legacy default stream. */
    public CudaStream(String name) {
        this.name = name;
        Cuda.check(cudaStreamCreateWithFlags(handle, cudaStreamNonBlocking), "cudaStreamCreate for " + name);
    }

    CUstream_st handle() {
        return handle;
    }

    /** The raw handle, for APIs that take a stream without JavaCPP's types (the collective API). */
    public long address() {
        return handle.address();
    }

    public String name() {
        return name;
    }

    public void synchronize() {
        Cuda.check(cudaStreamSynchronize(handle), "cudaStreamSynchronize(" + name + ")");
    }

    @Override
    public void close() {
        Cuda.check(cudaStreamDestroy(handle), "cudaStreamDestroy(" + name + ")");
    }
}
