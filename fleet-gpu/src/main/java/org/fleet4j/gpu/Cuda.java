package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cuGetErrorString;
import static org.bytedeco.cuda.global.cudart.cudaGetErrorName;
import static org.bytedeco.cuda.global.cudart.cudaGetErrorString;

import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;

/** Status checks of runtime and driver calls. Only classes that already loaded the runtime use it. */
final class Cuda {
    private Cuda() {
    }

    /** Throws naming {@code call} (e.g. "cudaMalloc(4096) on gpu:0") unless {@code status} is cudaSuccess. */
    static void check(int status, String call) {
        if (status != cudart.cudaSuccess) {
            throw new CudaException(call + " failed: " + cudaGetErrorName(status).getString() + " ("
                    + cudaGetErrorString(status).getString() + ")");
        }
    }

    /** As {@link #check} for driver-API calls (cuModuleLoadData, cuLaunchKernel), whose codes differ. */
    static void checkDriver(int status, String call) {
        if (status != 0) {
            try (PointerPointer<BytePointer> text = new PointerPointer<>(1)) {
                cuGetErrorString(status, text);
                BytePointer message = text.get(BytePointer.class, 0);
                throw new CudaException(call + " failed: CUresult " + status
                        + (message == null || message.isNull() ? "" : " (" + message.getString() + ")"));
            }
        }
    }
}
