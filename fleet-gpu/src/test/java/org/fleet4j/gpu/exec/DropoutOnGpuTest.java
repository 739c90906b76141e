package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.gpu.CudaLibrary;
import org.fleet4j.gpu.GpuAssumptions;
import org.fleet4j.gpu.GpuDevice;
import org.junit.jupiter.api.Test;

/**
 * dropout in training on the GPU, whose masks come from its own generator and so cannot equal the CPU's: Out = X * Mask,
 * Mask is 0 or 1/(1-p), the dropped share is p within five standard deviations, a step draws a new mask, and the same
 * seed draws the same masks in a fresh executor. Skips without a GPU.
 */
class DropoutOnGpuTest {
    private static final float P = 0.3f;
    private static final int N = 1 << 16;

    private static Program program() {
        Program p = new Program();
        var b = p.globalBlock();
        b.createVar("x", DType.F32, N).setData(true);
        b.createVar("out", DType.F32, N);
        b.createVar("mask", DType.F32, N);
        b.appendOp("dropout", Map.of("X", List.of("x")), Map.of("Out", List.of("out"), "Mask", List.of("mask")),
                Map.of("dropout_prob", P, "seed", 42L));
        return p;
    }

    @Test
    void masksKeepTheLawAndTheSeed() {
        GpuAssumptions.require(CudaLibrary.NVRTC);
        Tensor x = Tensor.zeros(N);
        for (int i = 0; i < N; i++) {
            x.setFloat(i, 1f + i % 7);
        }
        Program program = program();
        try (GpuDevice gpu = GpuDevice.open(0, 0)) {
            Tensor first;
            Tensor second;
            try (GpuExecutor exe = new GpuExecutor(gpu)) {
                Map<String, Tensor> a = exe.run(program, new Scope(), Map.of("x", x), List.of("out", "mask"));
                first = a.get("mask");
                second = exe.run(program, new Scope(), Map.of("x", x), List.of("mask")).get("mask");
                int dropped = 0;
                for (int i = 0; i < N; i++) {
                    float m = first.getFloat(i);
                    assertTrue(m == 0f || m == 1f / (1f - P), "mask[" + i + "] = " + m);
                    assertEquals(x.getFloat(i) * m, a.get("out").getFloat(i), 0f, "out[" + i + "]");
                    dropped += m == 0f ? 1 : 0;
                }
                double sd = Math.sqrt(N * P * (1 - P));
                assertTrue(Math.abs(dropped - N * P) < 5 * sd, dropped + " of " + N + " dropped, expected about " + N * P);
                int changed = 0;
                for (int i = 0; i < N; i++) {
                    changed += first.getFloat(i) != second.getFloat(i) ? 1 : 0;
                }
                assertTrue(changed > N / 10, "the second step drew the first step's mask (" + changed + " changed)");
            }
            try (GpuExecutor again = new GpuExecutor(gpu)) {
                Tensor replay = again.run(program, new Scope(), Map.of("x", x), List.of("mask")).get("mask");
                for (int i = 0; i < N; i++) {
                    assertEquals(first.getFloat(i), replay.getFloat(i), 0f, "seed 42, step 0, element " + i);
                }
            }
        }
    }
}
