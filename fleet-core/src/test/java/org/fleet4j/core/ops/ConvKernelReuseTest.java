package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The conv kernels keep scratch memory (im2col buffers, padded images) from step to step: a kernel that meets a
 * smaller batch and then a larger one, or another image size, computes what a fresh kernel does.
 */
class ConvKernelReuseTest {
    /** x [-1, 3, -1, -1] -> conv2d 4 filters 3x3 -> Output, and its gradients for a fed Output@GRAD. */
    private static Program program(int stride, int padding) {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, -1, 3, -1, -1).setData(true);
        b.createVar("w", DType.F32, 4, 3, 3, 3).setData(true);
        b.createVar("dy", DType.F32, -1, 4, -1, -1).setData(true);
        Map<String, Object> attrs = Map.of("strides", new int[]{stride, stride}, "paddings", new int[]{padding, padding});
        b.appendOp(ConvOps.CONV2D, Map.of("Input", List.of("x"), "Filter", List.of("w")), Map.of("Output", List.of("y")),
                attrs);
        b.appendOp(ConvOps.CONV2D + "_grad", Map.of("Input", List.of("x"), "Filter", List.of("w"),
                "Output", List.of("y"), "Output@GRAD", List.of("dy")),
                Map.of("Input@GRAD", List.of("dx"), "Filter@GRAD", List.of("dw")), attrs);
        return p;
    }

    private static Map<String, Tensor> step(Executor exe, Program p, int seed, int n, int size, int stride, int padding) {
        int out = (size + 2 * padding - 3) / stride + 1;
        Map<String, Tensor> feed = Map.of("x", uniform(seed, n, 3, size, size), "w", uniform(seed + 1, 4, 3, 3, 3),
                "dy", uniform(seed + 2, n, 4, out, out));
        return exe.run(p, new Scope(), feed, List.of("y", "dx", "dw"));
    }

    @ParameterizedTest
    @CsvSource({"1, 1", "2, 1", "1, 0"})
    void aKernelAcrossBatchAndImageSizesComputesWhatAFreshOneDoes(int stride, int padding) {
        Program p = program(stride, padding);
        int[][] steps = {{4, 8}, {2, 8}, {5, 6}, {4, 9}};
        try (Executor reused = new Executor()) {
            for (int s = 0; s < steps.length; s++) {
                Map<String, Tensor> got = step(reused, p, 10 * s, steps[s][0], steps[s][1], stride, padding);
                Map<String, Tensor> want;
                try (Executor fresh = new Executor()) {
                    want = step(fresh, p, 10 * s, steps[s][0], steps[s][1], stride, padding);
                }
                for (String v : List.of("y", "dx", "dw")) {
                    assertArrayEquals(want.get(v).toFloatArray(), got.get(v).toFloatArray(), "step " + s + " " + v);
                }
            }
        }
    }
}
