package org.fleet4j.gpu;

import static org.bytedeco.cuda.global.cublas.CUBLAS_COMPUTE_32F;
import static org.bytedeco.cuda.global.cublas.CUBLAS_GEMM_DEFAULT;
import static org.bytedeco.cuda.global.cublas.CUBLAS_OP_N;
import static org.bytedeco.cuda.global.cublas.CUBLAS_OP_T;
import static org.bytedeco.cuda.global.cublas.cublasCreate_v2;
import static org.bytedeco.cuda.global.cublas.cublasDestroy_v2;
import static org.bytedeco.cuda.global.cublas.cublasGemmEx;
import static org.bytedeco.cuda.global.cublas.cublasSetStream_v2;
import static org.bytedeco.cuda.global.cublas.cublasSgemm_v2;
import static org.bytedeco.cuda.global.cudart.CUDA_R_16BF;
import static org.bytedeco.cuda.global.cudart.CUDA_R_16F;
import static org.bytedeco.cuda.global.cudart.CUDA_R_32F;

import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.javacpp.FloatPointer;

/**
 * GEMM on one device through cuBLAS, on the device's compute stream. Fleet4J's matrices are row-major and cuBLAS's
 * column-major, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T, which swaps the operands and needs no copy.
 */
public final class Cublas implements AutoCloseable {
    /** Element types of GEMM inputs; the output and the accumulation are always f32. */
    public enum InputType { F32, BF16, FP16 }

    private final GpuDevice device;
    private final cublasContext handle = new cublasContext();

    Cublas(GpuDevice device) {
        CudaLoader.require(CudaLibrary.CUBLAS);
        this.device = device;
        checkStatus(cublasCreate_v2(handle), "cublasCreate");
        checkStatus(cublasSetStream_v2(handle, device.stream().handle()), "cublasSetStream");
    }

    /** C[m x n] = alpha * op(A) * op(B) + beta * C, all f32 row-major; op transposes when the flag is set. */
    public void sgemm(boolean transA, boolean transB, int m, int n, int k, float alpha, GpuBuffer a, GpuBuffer b,
                      float beta, GpuBuffer c) {
        checkSizes(m, n, k, a, b, c, 4);
        device.bind();
        try (FloatPointer al = new FloatPointer(1).put(alpha); FloatPointer be = new FloatPointer(1).put(beta)) {
            checkStatus(cublasSgemm_v2(handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                    n, m, k, al, new FloatPointer(GpuDevice.pointer(b)), transB ? k : n,
                    new FloatPointer(GpuDevice.pointer(a)), transA ? m : k, be, new FloatPointer(GpuDevice.pointer(c)), n),
                    "cublasSgemm " + m + "x" + n + "x" + k);
        }
    }

    /** As {@link #sgemm} with bf16 or fp16 inputs on tensor cores, accumulating and writing f32 (AMP's white ops). */
    public void gemm(InputType type, boolean transA, boolean transB, int m, int n, int k, float alpha, GpuBuffer a,
                     GpuBuffer b, float beta, GpuBuffer c) {
        int elementBytes = type == InputType.F32 ? 4 : 2;
        checkSizes(m, n, k, a, b, null, elementBytes);
        if (c.byteSize() < (long) m * n * 4) {
            throw new IllegalArgumentException("gemm: C holds " + c.byteSize() + " bytes, needs " + (long) m * n * 4);
        }
        int cudaType = switch (type) {
            case F32 -> CUDA_R_32F;
            case BF16 -> CUDA_R_16BF;
            case FP16 -> CUDA_R_16F;
        };
        device.bind();
        try (FloatPointer al = new FloatPointer(1).put(alpha); FloatPointer be = new FloatPointer(1).put(beta)) {
            checkStatus(cublasGemmEx(handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                    n, m, k, al, GpuDevice.pointer(b), cudaType, transB ? k : n, GpuDevice.pointer(a), cudaType,
                    transA ? m : k, be, GpuDevice.pointer(c), CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx " + type + " " + m + "x" + n + "x" + k);
        }
    }

    private static void checkSizes(int m, int n, int k, GpuBuffer a, GpuBuffer b, GpuBuffer c, int elementBytes) {
        if (m <= 0 || n <= 0 || k <= 0) {
            throw new IllegalArgumentException("gemm sizes must be positive, got m=" + m + " n=" + n + " k=" + k);
        }
        check(a, (long) m * k * elementBytes, "A", m + "x" + k);
        check(b, (long) k * n * elementBytes, "B", k + "x" + n);
        if (c != null) {
            check(c, (long) m * n * elementBytes, "C", m + "x" + n);
        }
    }

    private static void check(GpuBuffer buffer, long need, String which, String shape) {
        if (buffer.byteSize() < need) {
            throw new IllegalArgumentException("gemm: " + which + " (" + shape + ") needs " + need + " bytes, its buffer has "
                    + buffer.byteSize());
        }
    }

    private void checkStatus(int status, String call) {
        if (status != 0) {
            throw new CudaException(call + " on " + device.name() + " failed: cublasStatus " + status);
        }
    }

    @Override
    public void close() {
        cublasDestroy_v2(handle);
    }
}
