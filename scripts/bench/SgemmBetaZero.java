import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * OpenBLAS's cblas_sgemm with beta = 0 (it zeroes C in a pass of its own, sgemm_beta, then adds the product) against
 * zeroing C with MemorySegment.fill and calling it with beta = 1, which OpenBlasGemm does, on mlp_perf's shapes,
 * alternating call by call; medians in microseconds. One OpenBLAS thread.
 * Usage: java --enable-native-access=ALL-UNNAMED scripts/bench/SgemmBetaZero.java [CALLS=300] [LIBRARY=libopenblas.so.0]
 */
public class SgemmBetaZero {
    private static final int ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;

    public static void main(String[] args) throws Throwable {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        String library = args.length > 1 ? args[1] : "libopenblas.so.0";
        Linker linker = Linker.nativeLinker();
        SymbolLookup blas = SymbolLookup.libraryLookup(library, Arena.global());
        MethodHandle sgemm = linker.downcallHandle(blas.find("cblas_sgemm").orElseThrow(), FunctionDescriptor.ofVoid(
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_FLOAT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_FLOAT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        MethodHandle threads = linker.downcallHandle(blas.find("openblas_set_num_threads").orElseThrow(),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        threads.invokeExact(1);
        // name, transA, transB, m, n, k: C = op(A) op(B) as mlp_perf's matmul and matmul_grad call it
        Object[][] shapes = {
                {"fc1 dW = X^T dY  (784x512, k 64)", true, false, 784, 512, 64},
                {"fc2 dW = H^T dY  (512x512, k 64)", true, false, 512, 512, 64},
                {"fc1 Y = X W      (64x512, k 784)", false, false, 64, 512, 784},
                {"fc2 dX = dY W^T  (64x512, k 512)", false, true, 64, 512, 512},
        };
        Arena arena = Arena.ofAuto();
        SplittableRandom rnd = new SplittableRandom(1);
        for (Object[] s : shapes) {
            boolean ta = (boolean) s[1], tb = (boolean) s[2];
            int m = (int) s[3], n = (int) s[4], k = (int) s[5];
            MemorySegment a = random(arena, (long) m * k, rnd), b = random(arena, (long) k * n, rnd);
            MemorySegment c = arena.allocate((long) m * n * Float.BYTES, 64);
            int lda = ta ? m : k, ldb = tb ? k : n;
            double[] beta0 = new double[calls], fill = new double[calls];
            for (int i = 0; i < calls; i++) {
                long t0 = System.nanoTime();
                sgemm.invokeExact(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1f, a, lda, b, ldb, 0f, c, n);
                long t1 = System.nanoTime();
                c.fill((byte) 0);
                sgemm.invokeExact(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1f, a, lda, b, ldb, 1f, c, n);
                long t2 = System.nanoTime();
                beta0[i] = (t1 - t0) / 1e3;
                fill[i] = (t2 - t1) / 1e3;
            }
            double b0 = median(beta0), f = median(fill);
            System.out.printf("%s: beta 0 %.0f us, fill + beta 1 %.0f us (%.2fx)%n", s[0], b0, f, b0 / f);
        }
    }

    private static MemorySegment random(Arena arena, long count, SplittableRandom rnd) {
        MemorySegment s = arena.allocate(count * Float.BYTES, 64);
        for (long i = 0; i < count; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) rnd.nextDouble());
        }
        return s;
    }

    private static double median(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
