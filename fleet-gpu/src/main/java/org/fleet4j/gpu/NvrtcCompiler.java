package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.nvrtc.NVRTC_SUCCESS;
import static org.bytedeco.cuda.global.nvrtc.nvrtcCompileProgram;
import static org.bytedeco.cuda.global.nvrtc.nvrtcCreateProgram;
import static org.bytedeco.cuda.global.nvrtc.nvrtcDestroyProgram;
import static org.bytedeco.cuda.global.nvrtc.nvrtcGetCUBIN;
import static org.bytedeco.cuda.global.nvrtc.nvrtcGetCUBINSize;
import static org.bytedeco.cuda.global.nvrtc.nvrtcGetErrorString;
import static org.bytedeco.cuda.global.nvrtc.nvrtcGetProgramLog;
import static org.bytedeco.cuda.global.nvrtc.nvrtcGetProgramLogSize;
import static org.bytedeco.cuda.global.nvrtc.nvrtcVersion;

import java.util.List;
import org.bytedeco.cuda.nvrtc._nvrtcProgram;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * Compiles CUDA C at run time with NVRTC, straight to a cubin for the device's real architecture
 * ({@code --gpu-architecture=sm_XX}): a cubin needs no JIT by the driver, so it loads even when NVRTC is newer than
 * the driver, which PTX would not.
 */
public final class NvrtcCompiler implements KernelCompiler {
    private final String identity;

    public NvrtcCompiler() {
        CudaLoader.require(CudaLibrary.NVRTC);
        int[] major = new int[1];
        int[] minor = new int[1];
        check(nvrtcVersion(major, minor), "nvrtcVersion", "");
        identity = "nvrtc " + major[0] + "." + minor[0];
    }

    /** The options every module is compiled with. */
    static List<String> options(String arch) {
        return List.of("--gpu-architecture=" + arch, "--std=c++17", "-default-device");
    }

    @Override
    public byte[] compileToCubin(String moduleName, String source, String arch) {
        _nvrtcProgram program = new _nvrtcProgram();
        check(nvrtcCreateProgram(program, new BytePointer(source), new BytePointer(moduleName + ".cu"), 0,
                (PointerPointer<?>) null, (PointerPointer<?>) null), "nvrtcCreateProgram", moduleName);
        try {
            List<String> options = options(arch);
            PointerPointer<BytePointer> opts = new PointerPointer<>(options.size());
            for (int i = 0; i < options.size(); i++) {
                opts.put(i, new BytePointer(options.get(i)));
            }
            int status = nvrtcCompileProgram(program, options.size(), opts);
            if (status != NVRTC_SUCCESS) {
                throw new CudaException(identity + " could not compile kernel module " + moduleName + " for " + arch + ": "
                        + nvrtcGetErrorString(status).getString() + "\n" + log(program));
            }
            SizeTPointer size = new SizeTPointer(1);
            check(nvrtcGetCUBINSize(program, size), "nvrtcGetCUBINSize", moduleName);
            byte[] cubin = new byte[(int) size.get()];
            check(nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN", moduleName);
            return cubin;
        } finally {
            nvrtcDestroyProgram(program);
        }
    }

    private static String log(_nvrtcProgram program) {
        SizeTPointer size = new SizeTPointer(1);
        nvrtcGetProgramLogSize(program, size);
        byte[] log = new byte[(int) size.get()];
        nvrtcGetProgramLog(program, log);
        return new String(log, 0, Math.max(0, log.length - 1), java.nio.charset.StandardCharsets.UTF_8);
    }

    private void check(int status, String call, String module) {
        if (status != NVRTC_SUCCESS) {
            throw new CudaException(call + (module.isEmpty() ? "" : " for kernel module " + module) + " failed: "
                    + nvrtcGetErrorString(status).getString());
        }
    }

    @Override
    public String identity() {
        return identity;
    }
}
