package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cudart.cuLaunchKernel;
import static org.bytedeco.cuda.global.cudart.cuModuleGetFunction;
import static org.bytedeco.cuda.global.cudart.cuModuleLoadData;
import static org.bytedeco.cuda.global.cudart.cuModuleUnload;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUmod_st;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Fleet4J's CUDA C kernels on one device: each module is compiled (or taken from the {@link KernelCache}) and loaded
 * the first time one of its kernels is launched. Arguments are {@link GpuBuffer}s (passed as device pointers),
 * Integer, Long and Float, in the order of the kernel's C parameters.
 */
public final class GpuKernels implements AutoCloseable {
    private final GpuDevice device;
    private final KernelCache cache;
    private final Map<String, CUmod_st> modules = new HashMap<>();
    private final Map<String, CUfunc_st> functions = new HashMap<>();
    private final Map<String, String> moduleOf = new HashMap<>();
    private final KernelSignatures signatures;

    GpuKernels(GpuDevice device, KernelCache cache) {
        this.device = device;
        this.cache = cache;
        List<KernelModule> modules = KernelModule.all();
        for (KernelModule m : modules) {
            for (String entry : m.entryPoints()) {
                moduleOf.put(entry, m.name());
            }
        }
        signatures = new KernelSignatures(modules);
    }

    /** Launches a kernel; the arguments are checked against its C parameters first (count and kind). */
    public synchronized void launch(String kernel, LaunchShape shape, Object... args) {
        signatures.check(kernel, args);
        CUfunc_st f = function(kernel);
        // the array constructor keeps the argument pointers reachable until the launch has copied their values
        Pointer[] values = new Pointer[args.length];
        try {
            for (int i = 0; i < args.length; i++) {
                values[i] = argument(kernel, i, args[i]);
            }
            try (PointerPointer<Pointer> params = new PointerPointer<>(values)) {
                device.bind();
                Cuda.checkDriver(cuLaunchKernel(f, shape.gridX(), shape.gridY(), 1, shape.block(), 1, 1, shape.sharedBytes(),
                        device.stream().handle(), params, null), "launch of " + kernel + " on " + device.name());
            }
        } finally {
            for (Pointer v : values) {
                if (v != null) {
                    v.close(); // freed now rather than by the garbage collector: a step launches dozens of kernels
                }
            }
        }
    }

    private static Pointer argument(String kernel, int i, Object a) {
        return switch (a) {
            case GpuBuffer b -> new LongPointer(1).put(b.address());
            case Long l -> new LongPointer(1).put(l);
            case Integer n -> new IntPointer(1).put(n);
            case Float x -> new FloatPointer(1).put(x);
            default -> throw new IllegalArgumentException("argument " + i + " of kernel " + kernel + " is a "
                    + a.getClass().getSimpleName() + "; pass GpuBuffer, Long, Integer or Float");
        };
    }

    private CUfunc_st function(String kernel) {
        CUfunc_st f = functions.get(kernel);
        if (f != null) {
            return f;
        }
        String moduleName = moduleOf.get(kernel);
        if (moduleName == null) {
            throw new IllegalArgumentException("no kernel '" + kernel + "' in the modules " + KernelModule.NAMES);
        }
        CUmod_st module = modules.get(moduleName);
        if (module == null) {
            byte[] cubin = cache.cubin(KernelModule.load(moduleName), device.properties().arch());
            module = new CUmod_st();
            device.bind();
            Cuda.checkDriver(cuModuleLoadData(module, new BytePointer(cubin)),
                    "loading kernel module " + moduleName + " (" + device.properties().arch() + ") on " + device.name());
            modules.put(moduleName, module);
        }
        f = new CUfunc_st();
        Cuda.checkDriver(cuModuleGetFunction(f, module, kernel), "finding kernel " + kernel + " in module " + moduleName);
        functions.put(kernel, f);
        return f;
    }

    /** The number of times NVRTC ran for this device (0 when every module came from the cache). */
    public int compilations() {
        return cache.compilations();
    }

    @Override
    public synchronized void close() {
        for (CUmod_st m : modules.values()) {
            cuModuleUnload(m);
        }
        modules.clear();
        functions.clear();
    }
}
