package org.fleet4j.core.layers;

import java.util.Arrays;
import java.util.Map;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * How a parameter is initialised: an op appended to the startup program. Xavier and Kaiming derive their
 * range from the parameter's fan-in and fan-out (for a [in, out] matrix, in and out).
 */
public sealed interface Initializer {
    /** The startup op type and attributes for a parameter of this shape and seed. */
    OpDesc describe(long[] shape, long seed);

    record OpDesc(String type, Map<String, Object> attrs) {
    }

    static Initializer constant(float value) {
        return new Constant(value);
    }

    static Initializer uniform(float min, float max) {
        return new Uniform(min, max);
    }

    static Initializer normal(float mean, float std) {
        return new Normal(mean, std);
    }

    static Initializer xavierUniform() {
        return new Xavier(true);
    }

    static Initializer xavierNormal() {
        return new Xavier(false);
    }

    static Initializer kaimingUniform() {
        return new Kaiming(true);
    }

    static Initializer kaimingNormal() {
        return new Kaiming(false);
    }

    /**
     * Exactly the given values (Paddle's NumpyArrayInitializer), e.g. weights computed elsewhere, held as float32; a
     * parameter of another shape is refused when the layer is built.
     */
    static Initializer values(Tensor values) {
        return new Values(values.toFloatArray(), values.shape());
    }

    static Initializer values(float[] values, long... shape) {
        if (values.length != Shapes.numel(shape)) {
            throw new IllegalArgumentException(values.length + " values cannot fill shape " + Shapes.str(shape)
                    + " (" + Shapes.numel(shape) + " elements)");
        }
        return new Values(values.clone(), shape.clone());
    }

    record Values(float[] values, long[] shape) implements Initializer {
        public OpDesc describe(long[] paramShape, long seed) {
            if (!Arrays.equals(shape, paramShape)) {
                throw new IrException("the initializer's values have shape " + Shapes.str(shape) + ", the parameter has "
                        + Shapes.str(paramShape) + " (fc weights are [in, out])");
            }
            return new OpDesc("assign_value", Map.of("shape", paramShape, "fp32_values", values));
        }
    }

    record Constant(float value) implements Initializer {
        public OpDesc describe(long[] shape, long seed) {
            return new OpDesc("fill_constant", Map.of("shape", shape, "value", value));
        }
    }

    record Uniform(float min, float max) implements Initializer {
        public OpDesc describe(long[] shape, long seed) {
            return new OpDesc("uniform_random", Map.of("shape", shape, "min", min, "max", max, "seed", seed));
        }
    }

    record Normal(float mean, float std) implements Initializer {
        public OpDesc describe(long[] shape, long seed) {
            return new OpDesc("gaussian_random", Map.of("shape", shape, "mean", mean, "std", std, "seed", seed));
        }
    }

    /** Glorot: variance 2 / (fan_in + fan_out). */
    record Xavier(boolean uniform) implements Initializer {
        public OpDesc describe(long[] shape, long seed) {
            double fanIn = fanIn(shape);
            double fanOut = fanOut(shape);
            if (uniform) {
                float limit = (float) Math.sqrt(6.0 / (fanIn + fanOut));
                return new Uniform(-limit, limit).describe(shape, seed);
            }
            return new Normal(0f, (float) Math.sqrt(2.0 / (fanIn + fanOut))).describe(shape, seed);
        }
    }

    /** He: variance 2 / fan_in, for ReLU networks. */
    record Kaiming(boolean uniform) implements Initializer {
        public OpDesc describe(long[] shape, long seed) {
            double fanIn = fanIn(shape);
            if (uniform) {
                float limit = (float) Math.sqrt(6.0 / fanIn);
                return new Uniform(-limit, limit).describe(shape, seed);
            }
            return new Normal(0f, (float) Math.sqrt(2.0 / fanIn)).describe(shape, seed);
        }
    }

    private static double fanIn(long[] shape) {
        if (shape.length < 2) {
            return Math.max(1, shape.length == 0 ? 1 : shape[0]);
        }
        long receptive = 1;
        for (int i = 2; i < shape.length; i++) {
            receptive *= shape[i];
        }
        return shape.length == 2 ? shape[0] : shape[1] * receptive;
    }

    private static double fanOut(long[] shape) {
        if (shape.length < 2) {
            return Math.max(1, shape.length == 0 ? 1 : shape[0]);
        }
        long receptive = 1;
        for (int i = 2; i < shape.length; i++) {
            receptive *= shape[i];
        }
        return shape.length == 2 ? shape[1] : shape[0] * receptive;
    }
}
