package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cudaDriverGetVersion;
import static org.bytedeco.cuda.global.cudart.cudaErrorInsufficientDriver;
import static org.bytedeco.cuda.global.cudart.cudaErrorNoDevice;
import static org.bytedeco.cuda.global.cudart.cudaGetDeviceCount;
import static org.bytedeco.cuda.global.cudart.cudaGetDeviceProperties;
import static org.bytedeco.cuda.global.cudart.cudaRuntimeGetVersion;

import org.bytedeco.cuda.cudart.cudaDeviceProp;
import org.fleet4j.core.device.DeviceUnavailableException;

/** The process-wide view of CUDA: is it usable, how many GPUs, what are they. Loads the runtime on first use. */
public final class GpuRuntime {
    private GpuRuntime() {
    }

    /** The number of visible GPUs; 0 when the driver works but sees none. Throws naming what is missing otherwise. */
    public static int deviceCount() {
        CudaLoader.require(CudaLibrary.RUNTIME);
        int[] count = new int[1];
        int status = cudaGetDeviceCount(count);
        if (status == cudaErrorNoDevice) {
            return 0;
        }
        if (status == cudaErrorInsufficientDriver) {
            throw new DeviceUnavailableException("the NVIDIA driver is older than the CUDA runtime (driver supports CUDA "
                    + version(driverVersion()) + ", runtime is " + version(runtimeVersion())
                    + "): upgrade the driver, or put an older CUDA runtime on LD_LIBRARY_PATH");
        }
        Cuda.check(status, "cudaGetDeviceCount");
        return count[0];
    }

    public static DeviceProperties properties(int ordinal) {
        CudaLoader.require(CudaLibrary.RUNTIME);
        try (cudaDeviceProp p = new cudaDeviceProp()) {
            Cuda.check(cudaGetDeviceProperties(p, ordinal), "cudaGetDeviceProperties(gpu:" + ordinal + ")");
            return new DeviceProperties(ordinal, p.name().getString().trim(), p.major(), p.minor(), p.totalGlobalMem(),
                    p.multiProcessorCount());
        }
    }

    public static int driverVersion() {
        int[] v = new int[1];
        cudaDriverGetVersion(v);
        return v[0];
    }

    public static int runtimeVersion() {
        int[] v = new int[1];
        cudaRuntimeGetVersion(v);
        return v[0];
    }

    /** 13010 -> "13.1". */
    public static String version(int v) {
        return v / 1000 + "." + (v % 1000) / 10;
    }
}
