package org.fleet4j.gpu;

/**
 * A CUDA library Fleet4J binds to through JavaCPP, with the shared object its binding needs and where users get it.
 * Every binding also needs the driver ({@code libcuda.so.1}) and the runtime, because JavaCPP's CUDA presets all
 * build on cudart. NCCL is the collective module's (its nccl backend loads it).
 */
public enum CudaLibrary {
    RUNTIME("the CUDA runtime", "org.bytedeco.cuda.global.cudart", "libcudart.so.13",
            "pip install nvidia-cuda-runtime (CUDA 13 wheels) or apt install cuda-cudart-13-1"),
    CUBLAS("cuBLAS", "org.bytedeco.cuda.global.cublas", "libcublas.so.13",
            "pip install nvidia-cublas (CUDA 13 wheels) or apt install libcublas-13-1"),
    NVRTC("NVRTC", "org.bytedeco.cuda.global.nvrtc", "libnvrtc.so.13",
            "pip install nvidia-cuda-nvrtc (CUDA 13 wheels) or apt install cuda-nvrtc-13-1");

    private final String title;
    private final String bindingClass;
    private final String soname;
    private final String install;

    CudaLibrary(String title, String bindingClass, String soname, String install) {
        this.title = title;
        this.bindingClass = bindingClass;
        this.soname = soname;
        this.install = install;
    }

    public String title() {
        return title;
    }

    /** The JavaCPP class whose loading links the library. */
    public String bindingClass() {
        return bindingClass;
    }

    public String soname() {
        return soname;
    }

    /** What to install to get the library. */
    public String install() {
        return install;
    }
}
