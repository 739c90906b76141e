package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.tensor.BFloat16;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** cuBLAS GEMM against fleet-core's CPU GEMM on the same row-major inputs. Needs a GPU. */
class CublasTest {
    private static Tensor random(long seed, long rows, long cols) {
        Random r = new Random(seed);
        Tensor t = Tensor.zeros(rows, cols);
        for (long i = 0; i < t.numel(); i++) {
            t.setFloat(i, r.nextFloat() * 2 - 1);
        }
        return t;
    }

    private static void assertClose(Tensor expected, Tensor actual, double tolerance, String what) {
        for (long i = 0; i < expected.numel(); i++) {
            double e = expected.getFloat(i);
            double a = actual.getFloat(i);
            assertTrue(Math.abs(e - a) <= tolerance * Math.max(1, Math.abs(e)), what + ": element " + i + " " + a + " vs " + e);
        }
    }

    @Test
    void sgemmMatchesTheCpuForEveryTransposition() {
        GpuAssumptions.require(CudaLibrary.CUBLAS);
        try (GpuDevice gpu = GpuDevice.open(0, 0)) {
            int[][] shapes = {{64, 48, 32}, {257, 129, 65}, {1, 1000, 3}};
            for (int[] s : shapes) {
                int m = s[0];
                int n = s[1];
                int k = s[2];
                for (int t = 0; t < 4; t++) {
                    boolean ta = (t & 1) != 0;
                    boolean tb = (t & 2) != 0;
                    Tensor a = ta ? random(1, k, m) : random(1, m, k);
                    Tensor b = tb ? random(2, n, k) : random(2, k, n);
                    Tensor expected = Tensor.zeros(m, n);
                    Blas.get().sgemm(ta, tb, m, n, k, 1f, a.segment(), 0, ta ? m : k, b.segment(), 0, tb ? k : n,
                            0f, expected.segment(), 0, n);
                    GpuBuffer ga = gpu.allocate(a.byteSize());
                    GpuBuffer gb = gpu.allocate(b.byteSize());
                    GpuBuffer gc = gpu.allocate(expected.byteSize());
                    gpu.copyFromHost(a.segment(), ga, 0);
                    gpu.copyFromHost(b.segment(), gb, 0);
                    gpu.cublas().sgemm(ta, tb, m, n, k, 1f, ga, gb, 0f, gc);
                    Tensor actual = Tensor.zeros(m, n);
                    gpu.copyToHost(gc, 0, actual.segment());
                    // cuBLAS may use TF32 only if asked; default math is full f32
                    assertClose(expected, actual, 1e-4, "sgemm " + m + "x" + n + "x" + k + " ta=" + ta + " tb=" + tb);
                }
            }
        }
    }

    @Test
    void bf16GemmOnTensorCoresMatchesF32OnRoundedInputs() {
        GpuAssumptions.require(CudaLibrary.CUBLAS);
        int m = 128;
        int n = 96;
        int k = 256;
        Tensor a = random(3, m, k);
        Tensor b = random(4, k, n);
        Tensor a16 = a.to(DType.BF16);
        Tensor b16 = b.to(DType.BF16);
        Tensor expected = Tensor.zeros(m, n);
        Blas.get().sgemm(false, false, m, n, k, 1f, a16.to(DType.F32).segment(), 0, k, b16.to(DType.F32).segment(), 0, n,
                0f, expected.segment(), 0, n);
        try (GpuDevice gpu = GpuDevice.open(0, 0)) {
            GpuBuffer ga = gpu.allocate(a16.byteSize());
            GpuBuffer gb = gpu.allocate(b16.byteSize());
            GpuBuffer gc = gpu.allocate((long) m * n * 4);
            gpu.copyFromHost(a16.segment(), ga, 0);
            gpu.copyFromHost(b16.segment(), gb, 0);
            gpu.cublas().gemm(Cublas.InputType.BF16, false, false, m, n, k, 1f, ga, gb, 0f, gc);
            Tensor actual = Tensor.zeros(m, n);
            gpu.copyToHost(gc, 0, actual.segment());
            assertClose(expected, actual, 1e-3, "bf16 gemm (f32 accumulation)");
        }
        assertTrue(BFloat16.toFloat(BFloat16.fromFloat(1f)) == 1f);
    }
}
