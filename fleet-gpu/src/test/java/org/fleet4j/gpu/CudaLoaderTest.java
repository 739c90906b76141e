package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.fleet4j.core.device.DeviceUnavailableException;
import org.junit.jupiter.api.Test;

class CudaLoaderTest {
    private static UnsatisfiedLinkError linkError(String missing) {
        UnsatisfiedLinkError outer = new UnsatisfiedLinkError("no jnicudart in java.library.path: /usr/lib");
        outer.initCause(new UnsatisfiedLinkError("/tmp/cache/libjnicudart.so: " + missing
                + ": cannot open shared object file: No such file or directory"));
        return outer;
    }

    @Test
    void aMissingDriverIsNamedAsTheDriver() {
        DeviceUnavailableException e = CudaLoader.explain(CudaLibrary.RUNTIME, linkError("libcuda.so.1"), null);
        assertEquals("CUDA driver not found (libcuda.so.1 is missing): install the NVIDIA driver (nvidia-smi must work),"
                + " or in a container start it with the NVIDIA container toolkit (--gpus all); LD_LIBRARY_PATH is not set",
                e.getMessage());
    }

    @Test
    void aMissingLibraryIsNamedWithWhatToInstall() {
        DeviceUnavailableException e = CudaLoader.explain(CudaLibrary.CUBLAS, linkError("libcublasLt.so.13"), "/opt/x/lib");
        assertEquals("cuBLAS not found (libcublasLt.so.13 is missing, needed to use cuBLAS): pip install nvidia-cublas"
                + " (CUDA 13 wheels) or apt install libcublas-13-1, and put its lib directory on LD_LIBRARY_PATH"
                + " (LD_LIBRARY_PATH=/opt/x/lib)", e.getMessage());
        e = CudaLoader.explain(CudaLibrary.NVRTC, linkError("libcudart.so.13"), null);
        assertTrue(e.getMessage().startsWith("the CUDA runtime not found (libcudart.so.13 is missing, needed to use NVRTC)"),
                e.getMessage());
    }

    @Test
    void otherFailuresKeepTheirCause() {
        DeviceUnavailableException e = CudaLoader.explain(CudaLibrary.NVRTC,
                new UnsatisfiedLinkError("undefined symbol: nvrtcGetCUBIN"), "/x");
        assertEquals("cannot load NVRTC (libnvrtc.so.13): UnsatisfiedLinkError: undefined symbol: nvrtcGetCUBIN;"
                + " pip install nvidia-cuda-nvrtc (CUDA 13 wheels) or apt install cuda-nvrtc-13-1, and put its lib"
                + " directory on LD_LIBRARY_PATH (LD_LIBRARY_PATH=/x)", e.getMessage());
        e = CudaLoader.explain(CudaLibrary.RUNTIME, new ClassNotFoundException("org.bytedeco.cuda.global.cudart"), null);
        assertTrue(e.getMessage().startsWith("the CUDA bindings are not on the classpath"), e.getMessage());
    }

    /** The real bindings on this machine: where CUDA is absent the error must name a shared object, twice the same. */
    @Test
    void loadingWithoutCudaFailsNamingTheLibrary() {
        DeviceUnavailableException first;
        try {
            CudaLoader.require(CudaLibrary.CUBLAS);
            assumeTrue(false, "CUDA and cuBLAS load on this machine, so the missing-library path cannot be exercised here");
            return;
        } catch (DeviceUnavailableException e) {
            first = e;
        }
        assertTrue(first.getMessage().matches("(?s).*lib\\w+\\.so\\.\\d+.*LD_LIBRARY_PATH.*"), first.getMessage());
        var again = assertThrows(DeviceUnavailableException.class, () -> CudaLoader.require(CudaLibrary.CUBLAS));
        assertEquals(first.getMessage(), again.getMessage());
    }
}
