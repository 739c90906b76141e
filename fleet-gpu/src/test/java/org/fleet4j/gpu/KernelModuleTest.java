package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelModuleTest {
    @Test
    void everyModuleLoadsWithItsEntryPoints() {
        List<KernelModule> all = KernelModule.all();
        assertEquals(KernelModule.NAMES.size(), all.size());
        assertEquals(List.of("elementwise_add_f32", "elementwise_sub_f32", "elementwise_mul_f32", "elementwise_div_f32"),
                KernelModule.load("elementwise").entryPoints());
        assertEquals(List.of("relu_f32", "relu_grad_f32", "sigmoid_f32", "sigmoid_grad_f32", "tanh_f32", "tanh_grad_f32",
                "gelu_f32", "gelu_grad_f32", "scale_f32"), KernelModule.load("activations").entryPoints());
        assertEquals(List.of("softmax_xent_f32", "softmax_xent_grad_f32"), KernelModule.load("softmax_xent").entryPoints());
        assertEquals(List.of("sum_f32", "column_sum_f32"), KernelModule.load("reduce").entryPoints());
        assertEquals(List.of("sgd_f32", "momentum_f32", "adam_f32"), KernelModule.load("optimizers").entryPoints());
        assertEquals(List.of("cast_f32_to_bf16", "cast_bf16_to_f32", "cast_f32_to_f16", "cast_f16_to_f32",
                "check_finite_and_unscale_f32", "update_loss_scaling_f32", "logical_not_i64"), KernelModule.load("amp").entryPoints());
        assertEquals(List.of("lookup_table_f32", "lookup_table_grad_f32"), KernelModule.load("embedding").entryPoints());
        assertEquals(List.of("batch_norm_f32", "batch_norm_grad_f32"), KernelModule.load("batch_norm").entryPoints());
        assertEquals(List.of("dropout_f32"), KernelModule.load("dropout").entryPoints());
        var e = assertThrows(IllegalArgumentException.class, () -> KernelModule.load("conv"));
        assertTrue(e.getMessage().startsWith("no kernel module 'conv'"), e.getMessage());
    }

    /**
     * Where the CUDA toolkit is installed (with or without a GPU), every module must compile to a cubin for a real
     * architecture and define its entry points: the same sources NVRTC compiles at run time.
     */
    @Test
    void everyModuleCompilesToACubinForHopper(@TempDir Path dir) {
        Path nvcc = NvccCompiler.find();
        assumeTrue(nvcc != null, "no CUDA toolkit: nvcc not found in $CUDA_HOME/bin, /usr/local/cuda/bin or the PATH");
        KernelCache cache = new KernelCache(new NvccCompiler(nvcc, dir), dir.resolve("cache"));
        KernelModule.all().parallelStream().forEach(m -> { // nvcc is single-threaded: use every core
            byte[] cubin = cache.cubin(m, "sm_90");
            String text = new String(cubin, StandardCharsets.ISO_8859_1);
            for (String entry : m.entryPoints()) {
                assertTrue(text.contains(".text." + entry), m.name() + ": no code for " + entry + " in the cubin");
            }
        });
        assertEquals(KernelModule.NAMES.size(), cache.compilations());
        KernelCache again = new KernelCache(new NvccCompiler(nvcc, dir), dir.resolve("cache"));
        again.cubin(KernelModule.load("reduce"), "sm_90");
        assertEquals(0, again.compilations());
    }
}
