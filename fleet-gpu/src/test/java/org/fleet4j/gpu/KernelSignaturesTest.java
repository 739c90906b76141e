package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Every entry point's C parameters are read, and launches that do not fit them are refused naming the parameter. */
class KernelSignaturesTest {
    private static final KernelSignatures SIGNATURES = new KernelSignatures(KernelModule.all());
    private static final GpuBuffer BUFFER = new GpuBuffer(null, 0x1000, 64);

    @Test
    void everyEntryPointHasItsParameters() {
        for (KernelModule m : KernelModule.all()) {
            for (String entry : m.entryPoints()) {
                assertEquals(false, SIGNATURES.parameters(entry).isEmpty(), entry);
            }
        }
        assertEquals(List.of("const float* x", "const float* y", "float* out", "long long n", "long long ny"),
                SIGNATURES.parameters("elementwise_mul_f32"), "a kernel made by elementwise.cu's BINARY macro");
        assertEquals(List.of("const float* x", "float* out", "float* mask", "long long n", "float p", "float kept",
                "unsigned long long seed", "long long step"), SIGNATURES.parameters("dropout_f32"));
        assertEquals(11, SIGNATURES.parameters("update_loss_scaling_f32").size());
    }

    @Test
    void argumentsThatFitPass() {
        SIGNATURES.check("scale_f32", new Object[]{BUFFER, BUFFER, 2f, 0f, 16L});
        SIGNATURES.check("batch_norm_grad_f32", new Object[]{BUFFER, BUFFER, BUFFER, BUFFER, BUFFER, BUFFER, BUFFER,
                BUFFER, 4L, 3L, 1L, 0});
    }

    @Test
    void aWrongCountOrKindIsRefusedNamingTheParameter() {
        var count = assertThrows(IllegalArgumentException.class,
                () -> SIGNATURES.check("scale_f32", new Object[]{BUFFER, BUFFER, 2f, 16L}));
        assertEquals("kernel scale_f32 takes 5 arguments (const float* x, float* out, float scale, float bias,"
                + " long long n), the launch passes 4", count.getMessage());
        var kind = assertThrows(IllegalArgumentException.class,
                () -> SIGNATURES.check("scale_f32", new Object[]{BUFFER, BUFFER, 2f, 0f, 16}));
        assertEquals("argument 4 of kernel scale_f32 is a Integer; its C parameter 'long long n' takes a Long",
                kind.getMessage());
        var unknown = assertThrows(IllegalArgumentException.class, () -> SIGNATURES.check("conv2d_f32", new Object[0]));
        assertEquals(true, unknown.getMessage().startsWith("no kernel 'conv2d_f32' in the modules ["), unknown.getMessage());
    }
}
