package org.fleet4j.core.drift;

import java.util.Random;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Rounding-level noise: moves every nonzero float32 parameter value a few units in the last place, up or down at
 * random (seeded). A training started from the moved values differs from the original by float32 rounding alone, as
 * two correct trainings that add in different orders do, so how far the two end apart is the float32 noise of that
 * training, against which the drift tests judge a difference between two runs. Zeros stay zero: a value in the
 * subnormal range would slow the kernels without being a realistic rounding.
 */
public final class RoundingNoise {
    private RoundingNoise() {
    }

    /** Moves every nonzero value of the float32 tensor {@code t} by {@code ulps} ulps in a random direction. */
    public static void perturb(Tensor t, int ulps, Random random) {
        if (t.dtype() != DType.F32) {
            throw new IllegalArgumentException("rounding noise is for float32 tensors, got " + t.dtype().displayName());
        }
        for (long i = 0; i < t.numel(); i++) {
            float x = t.getFloat(i);
            if (x == 0f) {
                continue;
            }
            boolean up = random.nextBoolean();
            for (int k = 0; k < ulps; k++) {
                x = up ? Math.nextUp(x) : Math.nextDown(x);
            }
            t.setFloat(i, x);
        }
    }

    /** Perturbs every float32 parameter of {@code main} in {@code scope}, in program order, from one seeded stream; 0 ulps leaves them. */
    public static void perturbParameters(Program main, Scope scope, int ulps, long seed) {
        if (ulps < 0) {
            throw new IllegalArgumentException("ulps must be 0 or more, got " + ulps);
        }
        if (ulps == 0) {
            return;
        }
        Random random = new Random(seed);
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter() && v.dtype() == DType.F32) {
                perturb(scope.get(v.name()), ulps, random);
            }
        }
    }
}
