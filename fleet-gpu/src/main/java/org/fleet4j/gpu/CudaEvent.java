package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cudaErrorNotReady;
import static org.bytedeco.cuda.global.cudart.cudaEventCreate;
import static org.bytedeco.cuda.global.cudart.cudaEventDestroy;
import static org.bytedeco.cuda.global.cudart.cudaEventElapsedTime;
import static org.bytedeco.cuda.global.cudart.cudaEventQuery;
import static org.bytedeco.cuda.global.cudart.cudaEventRecord;
import static org.bytedeco.cuda.global.cudart.cudaEventSynchronize;
import static org.bytedeco.cuda.global.cudart.cudaStreamWaitEvent;
import static org.bytedeco.cuda.global.cudart.cudaSuccess;

import org.bytedeco.cuda.cudart.CUevent_st;

/** A point in a stream's work: to wait for, to order another stream after, or to time kernels between two of. */
public final class CudaEvent implements AutoCloseable {
    private final CUevent_st handle = new CUevent_st();

    public CudaEvent() {
        Cuda.check(cudaEventCreate(handle), "cudaEventCreate");
    }

    public CudaEvent record(CudaStream stream) {
        Cuda.check(cudaEventRecord(handle, stream.handle()), "cudaEventRecord on " + stream.name());
        return this;
    }

    /** Whether the work before the event has finished; never blocks. */
    public boolean isDone() {
        int status = cudaEventQuery(handle);
        if (status == cudaErrorNotReady) {
            return false;
        }
        Cuda.check(status, "cudaEventQuery");
        return status == cudaSuccess;
    }

    public void synchronize() {
        Cuda.check(cudaEventSynchronize(handle), "cudaEventSynchronize");
    }

    /** Makes later work on {@code stream} wait for this event, without blocking the host. */
    public void orderBefore(CudaStream stream) {
        Cuda.check(cudaStreamWaitEvent(stream.handle(), handle, 0), "cudaStreamWaitEvent on " + stream.name());
    }

    /** Milliseconds of device time between {@code start} and this event (both recorded and finished). */
    public float millisSince(CudaEvent start) {
        float[] ms = new float[1];
        Cuda.check(cudaEventElapsedTime(ms, start.handle, handle), "cudaEventElapsedTime");
        return ms[0];
    }

    @Override
    public void close() {
        Cuda.check(cudaEventDestroy(handle), "cudaEventDestroy");
    }
}
