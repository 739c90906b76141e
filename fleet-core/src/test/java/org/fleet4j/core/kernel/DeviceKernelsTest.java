package org.fleet4j.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.MatmulOps;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.OptimizerOps;
import org.junit.jupiter.api.Test;

/** One device's kernel table: kernels against known specs, declared host fallbacks, where each instance runs. */
class DeviceKernelsTest {
    private static Op momentum(float weightDecay) {
        return new Op(OptimizerOps.MOMENTUM, Map.of(), Map.of(), Map.of("weight_decay", weightDecay));
    }

    private static Op op(String type) {
        return new Op(type, Map.of("X", List.of("x")), Map.of("Out", List.of("y")), Map.of());
    }

    @Test
    void anInstanceRunsOnTheDeviceTakesItsDeclaredFallbackOrIsRefusedWithTheReason() {
        DeviceKernels<String> gpu = new DeviceKernels<>(DeviceKind.GPU);
        KernelRegistrar<String> r = gpu.registrar("test library");
        r.kernel(MatmulOps.MATMUL, "matmul kernel");
        r.kernel(OptimizerOps.MOMENTUM, op -> op.floatAttr("weight_decay") == 0f, "weight_decay 0", "momentum kernel");
        r.hostFallback(OptimizerOps.MOMENTUM, "with weight decay: the parameter each way per step");
        gpu.checkFallbacks();

        assertEquals("matmul kernel", gpu.factory(op(MatmulOps.MATMUL)));
        assertEquals(new Placement(Placement.Kind.DEVICE, "gpu kernel"), gpu.placement(op(MatmulOps.MATMUL)));
        assertEquals("momentum kernel", gpu.factory(momentum(0f)));
        assertEquals(new Placement(Placement.Kind.DEVICE, "gpu kernel (weight_decay 0)"), gpu.placement(momentum(0f)));
        assertNull(gpu.factory(momentum(0.01f)));
        assertEquals(new Placement(Placement.Kind.HOST_FALLBACK, "with weight decay: the parameter each way per step"),
                gpu.placement(momentum(0.01f)));
        Placement none = gpu.placement(op(OpSpec.gradType(MatmulOps.MATMUL)));
        assertEquals(new Placement(Placement.Kind.NONE, "no gpu kernel and no host fallback"), none);
        assertTrue(gpu.covers(OptimizerOps.MOMENTUM));
    }

    @Test
    void aKernelIsRegisteredAgainstAKnownSpecOnceAndAPartialKernelNeedsAFallback() {
        DeviceKernels<String> gpu = new DeviceKernels<>(DeviceKind.GPU);
        KernelRegistrar<String> r = gpu.registrar("test library");
        String unknown = assertThrows(IllegalStateException.class, () -> r.kernel("matmull", "k")).getMessage();
        assertEquals("test library registers a gpu kernel for op type 'matmull', which no op library defines", unknown);
        r.kernel(MatmulOps.MATMUL, "k");
        String twice = assertThrows(IllegalStateException.class, () -> r.kernel(MatmulOps.MATMUL, "k2")).getMessage();
        assertEquals("test library registers a gpu kernel for matmul, which already has one", twice);
        r.kernel(OptimizerOps.MOMENTUM, op -> false, "weight_decay 0", "k");
        String noFallback = assertThrows(IllegalStateException.class, gpu::checkFallbacks).getMessage();
        assertEquals("the gpu kernel of momentum handles weight_decay 0 but no host fallback is declared for the other"
                + " instances", noFallback);
    }

    @Test
    void onTheCpuEveryOpWithASpecKernelRuns() {
        assertEquals(new Placement(Placement.Kind.DEVICE, "cpu kernel"),
                KernelRegistry.placement(DeviceKind.CPU, op(MatmulOps.MATMUL)));
        assertSame(DeviceKind.GPU, DeviceKind.parse(" CUDA "));
    }
}
