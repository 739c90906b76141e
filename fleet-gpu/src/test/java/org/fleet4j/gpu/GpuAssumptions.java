package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.nccl.NcclLibrary;
import org.fleet4j.core.device.DeviceUnavailableException;

/** Skips a test, with the reason, where no CUDA device can be used. */
public final class GpuAssumptions {
    private GpuAssumptions() {
    }

    public static void requireGpu() {
        int count;
        try {
            count = GpuRuntime.deviceCount();
        } catch (DeviceUnavailableException e) {
            assumeTrue(false, "no CUDA device: " + e.getMessage());
            return;
        }
        assumeTrue(count > 0, "no CUDA device: the driver loads but sees no GPU (check CUDA_VISIBLE_DEVICES)");
    }

    public static void require(CudaLibrary library) {
        requireGpu();
        try {
            CudaLoader.require(library);
        } catch (DeviceUnavailableException e) {
            assumeTrue(false, "no CUDA device: " + e.getMessage());
        }
    }

    /** A GPU, and NCCL for the collective module's nccl backend. */
    public static void requireNccl() {
        requireGpu();
        try {
            NcclLibrary.require();
        } catch (CollectiveException e) {
            assumeTrue(false, "no NCCL: " + e.getMessage());
        }
    }
}
