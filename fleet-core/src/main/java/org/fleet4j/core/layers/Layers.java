package org.fleet4j.core.layers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;

/**
 * The layers API: builds a main program and, for its parameters, the startup program that initialises them.
 * <pre>
 * Program main = new Program(), startup = new Program();
 * Layers nn = new Layers(main, startup);
 * Var x = nn.data("x", DType.F32, -1, 784), y = nn.data("y", DType.I64, -1, 1);
 * Var logits = nn.fc(nn.fc(x, 512, "relu"), 10, null);
 * Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
 * </pre>
 * Default parameter names: each layer call takes the prefix {@code <layer>_<n>} ({@code fc_0}, {@code fc_1}, ...,
 * {@code embedding_0}, {@code batch_norm_0}, {@code conv2d_0}, {@code group_norm_0}), where n counts from 0 the earlier calls of that kind in the same main
 * program that took a default name, and names its weight {@code <prefix>.w_0} and its bias {@code <prefix>.b_0};
 * batch norm's running mean and variance are {@code <prefix>.w_1} and {@code <prefix>.w_2}. A layer given a name
 * (Paddle's {@code fc(..., name=...)}) takes it as its prefix and no number; a {@link ParamAttr} name replaces one
 * parameter's name, winning over the layer's; a layer whose parameters are all named takes no number.
 */
public final class Layers {
    private final Program main;
    private final Program startup;
    private long seedCounter;

    public Layers(Program main, Program startup) {
        this.main = main;
        this.startup = startup;
        main.setStartupProgram(startup);
    }

    public Program main() {
        return main;
    }

    public Program startup() {
        return startup;
    }

    private Block block() {
        return main.globalBlock();
    }

    /** An input fed at every run; -1 marks a dimension known only then (the batch). */
    public Var data(String name, DType dtype, long... shape) {
        return block().createVar(name, dtype, shape).setData(true);
    }

    /** A trainable parameter, created in the main program and initialised by an op in the startup program. */
    public Var createParameter(String name, DType dtype, long[] shape, Initializer init) {
        if (block().hasVar(name)) {
            throw new IrException("parameter name '" + name + "' is already used by a var of the program; give each"
                    + " parameter its own name");
        }
        Initializer.OpDesc d;
        try {
            d = init.describe(shape, nextSeed());
        } catch (IrException e) {
            throw new IrException("parameter " + name + ": " + e.getMessage());
        }
        Var p = block().createVar(name, dtype, shape).setParameter(true);
        Var s = startup.globalBlock().createVar(name, dtype, shape).setParameter(true);
        Map<String, Object> attrs = new LinkedHashMap<>(d.attrs());
        attrs.put("dtype", dtype.displayName());
        startup.globalBlock().appendOp(d.type(), Map.of(), Map.of("Out", List.of(s.name())), attrs);
        return p;
    }

    /** A parameter as {@code attr} says, else with the layer's default name and initializer. */
    private Var createParameter(ParamAttr attr, String defaultName, DType dtype, long[] shape, Initializer defaultInit) {
        Var p = createParameter(attr.name() != null ? attr.name() : defaultName, dtype, shape,
                attr.initializer() != null ? attr.initializer() : defaultInit);
        return p.setStopGradient(!attr.trainable()).setRegularizer(attr.regularizer());
    }

    /**
     * The prefix of a layer's default names: the layer's own name if it has one, else {@code <kind>_<n>}, taken only
     * when one of them is used (so named layers skip no number).
     */
    private String prefix(String kind, String layerName, String... names) {
        if (layerName != null) {
            if (layerName.isBlank()) {
                throw new IllegalArgumentException("a " + kind + " layer's name must not be blank; pass null for the"
                        + " default names");
            }
            return layerName;
        }
        for (String n : names) {
            if (n == null) {
                return main.uniqueName(kind);
            }
        }
        return null;
    }

    /** A persistable, non-trainable var (running statistics, counters) initialised to a constant. */
    public Var createPersistable(String name, DType dtype, long[] shape, float value) {
        if (block().hasVar(name)) {
            throw new IrException("var name '" + name + "' is already used by a var of the program; give each its own name");
        }
        Var p = block().createVar(name, dtype, shape).setPersistable(true).setStopGradient(true);
        startup.globalBlock().createVar(name, dtype, shape).setPersistable(true);
        startup.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(name)),
                Map.of("shape", shape, "dtype", dtype.displayName(), "value", value));
        return p;
    }

    /** A different seed for every random op, all derived from the program's seed. */
    public long nextSeed() {
        return main.randomSeed() * 1_000_003L + (++seedCounter);
    }

    /** Appends one op whose outputs are fresh temporaries; returns them in slot order. */
    public Var[] op(String type, Map<String, List<String>> inputs, List<String> outSlots, Map<String, Object> attrs) {
        return op(type, type, inputs, outSlots, attrs);
    }

    /**
     * As {@link #op(String, Map, List, Map)}, the temporaries named {@code <tempPrefix>_<n>}: a layer whose op type is
     * also its parameters' default prefix (conv2d, group_norm) takes another, so that its temporaries do not use up the
     * numbers of the default-named layers.
     */
    private Var[] op(String type, String tempPrefix, Map<String, List<String>> inputs, List<String> outSlots,
                     Map<String, Object> attrs) {
        Map<String, List<String>> outs = new LinkedHashMap<>();
        Var[] vars = new Var[outSlots.size()];
        for (int i = 0; i < vars.length; i++) {
            vars[i] = block().createTemp(tempPrefix);
            outs.put(outSlots.get(i), List.of(vars[i].name()));
        }
        block().appendOp(type, inputs, outs, attrs);
        return vars;
    }

    private Var unary(String type, Var x, Map<String, Object> attrs) {
        return op(type, Map.of("X", List.of(x.name())), List.of("Out"), attrs)[0];
    }

    private Var binary(String type, Var x, Var y) {
        return op(type, Map.of("X", List.of(x.name()), "Y", List.of(y.name())), List.of("Out"), Map.of())[0];
    }

    /** Fully connected: act(x W + b), W [in, size] Xavier-initialised, b zeros. act may be null. */
    public Var fc(Var x, int size, String act) {
        return fc(x, size, act, ParamAttr.DEFAULT, ParamAttr.DEFAULT);
    }

    public Var fc(Var x, int size, String act, Initializer weightInit, Initializer biasInit) {
        return fc(x, size, act, ParamAttr.initializedBy(weightInit), ParamAttr.initializedBy(biasInit));
    }

    /** As {@link #fc(Var, int, String)}, named: its parameters are {@code <name>.w_0} and {@code <name>.b_0}. */
    public Var fc(Var x, int size, String act, String name) {
        return fc(x, size, act, name, ParamAttr.DEFAULT, ParamAttr.DEFAULT);
    }

    /** As {@link #fc(Var, int, String)}, with the weight's and the bias's name, initializer, trainability, decay. */
    public Var fc(Var x, int size, String act, ParamAttr weight, ParamAttr bias) {
        return fc(x, size, act, null, weight, bias);
    }

    /**
     * As {@link #fc(Var, int, String, ParamAttr, ParamAttr)}, with the layer's name (Paddle's {@code fc(name=...)})
     * as the prefix of the parameters that {@code weight} and {@code bias} leave unnamed; null for the default prefix.
     */
    public Var fc(Var x, int size, String act, String name, ParamAttr weight, ParamAttr bias) {
        long[] xs = x.shape();
        if (xs.length != 2) {
            x = reshape(x, -1, flattenedWidth(xs));
            xs = x.shape();
        }
        String prefix = prefix("fc", name, weight.name(), bias.name());
        Var w = createParameter(weight, prefix + ".w_0", x.dtype(), new long[]{xs[1], size}, Initializer.xavierUniform());
        Var b = createParameter(bias, prefix + ".b_0", x.dtype(), new long[]{size}, Initializer.constant(0f));
        Var h = add(matmul(x, w, false, false, 1f), b);
        return act == null ? h : activation(act, h);
    }

    private static long flattenedWidth(long[] s) {
        long w = 1;
        for (int i = 1; i < s.length; i++) {
            if (s[i] < 0) {
                throw new IrException("fc input " + java.util.Arrays.toString(s) + " has an unknown non-batch dimension");
            }
            w *= s[i];
        }
        return w;
    }

    public Var activation(String act, Var x) {
        return switch (act) {
            case "relu", "sigmoid", "tanh", "gelu", "softmax" -> unary(act, x, Map.of());
            default -> throw new IrException("unknown activation '" + act + "' (relu, sigmoid, tanh, gelu, softmax)");
        };
    }

    public Var matmul(Var x, Var y, boolean transposeX, boolean transposeY, float alpha) {
        return op("matmul", Map.of("X", List.of(x.name()), "Y", List.of(y.name())), List.of("Out"),
                Map.of("transpose_X", transposeX, "transpose_Y", transposeY, "alpha", alpha))[0];
    }

    public Var matmul(Var x, Var y) {
        return matmul(x, y, false, false, 1f);
    }

    public Var add(Var x, Var y) {
        return binary("elementwise_add", x, y);
    }

    public Var sub(Var x, Var y) {
        return binary("elementwise_sub", x, y);
    }

    public Var mul(Var x, Var y) {
        return binary("elementwise_mul", x, y);
    }

    public Var div(Var x, Var y) {
        return binary("elementwise_div", x, y);
    }

    public Var relu(Var x) {
        return unary("relu", x, Map.of());
    }

    public Var sigmoid(Var x) {
        return unary("sigmoid", x, Map.of());
    }

    public Var tanh(Var x) {
        return unary("tanh", x, Map.of());
    }

    public Var gelu(Var x) {
        return unary("gelu", x, Map.of());
    }

    public Var softmax(Var x) {
        return unary("softmax", x, Map.of());
    }

    /** The per-row loss [batch, 1] of softmax + cross entropy against integer labels. */
    public Var softmaxWithCrossEntropy(Var logits, Var label) {
        return op("softmax_with_cross_entropy", Map.of("Logits", List.of(logits.name()), "Label", List.of(label.name())),
                List.of("Softmax", "Loss"), Map.of())[1];
    }

    public Var mean(Var x) {
        return unary("mean", x, Map.of());
    }

    public Var sum(List<Var> xs) {
        return op("sum", Map.of("X", xs.stream().map(Var::name).toList()), List.of("Out"), Map.of())[0];
    }

    public Var scale(Var x, float scale, float bias) {
        return unary("scale", x, Map.of("scale", scale, "bias", bias));
    }

    /** Top-1 accuracy of scores [batch, classes] against labels [batch, 1], as a float scalar. */
    public Var accuracy(Var scores, Var label) {
        return op("accuracy", Map.of("Out", List.of(scores.name()), "Label", List.of(label.name())),
                List.of("Accuracy"), Map.of())[0];
    }

    public Var reshape(Var x, long... shape) {
        return unary("reshape", x, Map.of("shape", shape));
    }

    public Var concat(List<Var> xs, int axis) {
        return op("concat", Map.of("X", xs.stream().map(Var::name).toList()), List.of("Out"), Map.of("axis", axis))[0];
    }

    /** Randomly zeroes elements with probability p in training and rescales the rest by 1/(1-p). */
    public Var dropout(Var x, float p, boolean isTest) {
        return op("dropout", Map.of("X", List.of(x.name())), List.of("Out", "Mask"),
                Map.of("dropout_prob", p, "is_test", isTest, "seed", nextSeed()))[0];
    }

    /** Rows of a [vocab, dim] table for integer ids; is_sparse makes its gradient a SelectedRows. */
    public Var embedding(Var ids, long vocab, long dim, boolean isSparse) {
        return embedding(ids, vocab, dim, isSparse, ParamAttr.DEFAULT);
    }

    /** As {@link #embedding(Var, long, long, boolean)}, named: its table is {@code <name>.w_0}. */
    public Var embedding(Var ids, long vocab, long dim, boolean isSparse, String name) {
        return embedding(ids, vocab, dim, isSparse, name, ParamAttr.DEFAULT);
    }

    /** As {@link #embedding(Var, long, long, boolean)}, with the table's name, initializer, trainability and decay. */
    public Var embedding(Var ids, long vocab, long dim, boolean isSparse, ParamAttr table) {
        return embedding(ids, vocab, dim, isSparse, null, table);
    }

    /** As {@link #embedding(Var, long, long, boolean, ParamAttr)}, with the layer's name (null for the default). */
    public Var embedding(Var ids, long vocab, long dim, boolean isSparse, String name, ParamAttr table) {
        String prefix = prefix("embedding", name, table.name());
        Var w = createParameter(table, prefix + ".w_0", DType.F32, new long[]{vocab, dim}, Initializer.xavierUniform());
        return op("lookup_table", Map.of("W", List.of(w.name()), "Ids", List.of(ids.name())), List.of("Out"),
                Map.of("is_sparse", isSparse))[0];
    }

    /**
     * Batch normalisation over the batch (and spatial) dims of x [N, C] or [N, C, H, W]: learnable scale and
     * bias, running mean and variance updated in training and used when isTest.
     */
    public Var batchNorm(Var x, boolean isTest, float momentum, float epsilon) {
        return batchNorm(x, isTest, momentum, epsilon, ParamAttr.DEFAULT, ParamAttr.DEFAULT, null, null);
    }

    /**
     * As {@link #batchNorm(Var, boolean, float, float)}, named: its scale and bias are {@code <name>.w_0} and
     * {@code <name>.b_0}, its running mean and variance {@code <name>.w_1} and {@code <name>.w_2}.
     */
    public Var batchNorm(Var x, boolean isTest, float momentum, float epsilon, String name) {
        return batchNorm(x, isTest, momentum, epsilon, name, ParamAttr.DEFAULT, ParamAttr.DEFAULT, null, null);
    }

    /**
     * As {@link #batchNorm(Var, boolean, float, float)}, with the scale's and bias's attributes and the names of the
     * running mean and variance (null for the defaults; Paddle's moving_mean_name and moving_variance_name).
     */
    public Var batchNorm(Var x, boolean isTest, float momentum, float epsilon, ParamAttr scaleAttr, ParamAttr biasAttr,
                         String meanName, String varianceName) {
        return batchNorm(x, isTest, momentum, epsilon, null, scaleAttr, biasAttr, meanName, varianceName);
    }

    /**
     * As {@link #batchNorm(Var, boolean, float, float, ParamAttr, ParamAttr, String, String)}, with the layer's name
     * as the prefix of what the attributes and names leave to the defaults (null for the default prefix).
     */
    public Var batchNorm(Var x, boolean isTest, float momentum, float epsilon, String name, ParamAttr scaleAttr,
                         ParamAttr biasAttr, String meanName, String varianceName) {
        long c = x.shape()[1];
        String prefix = prefix("batch_norm", name, scaleAttr.name(), biasAttr.name(), meanName, varianceName);
        Var scale = createParameter(scaleAttr, prefix + ".w_0", x.dtype(), new long[]{c}, Initializer.constant(1f));
        Var bias = createParameter(biasAttr, prefix + ".b_0", x.dtype(), new long[]{c}, Initializer.constant(0f));
        Var mean = createPersistable(meanName != null ? meanName : prefix + ".w_1", x.dtype(), new long[]{c}, 0f);
        Var var = createPersistable(varianceName != null ? varianceName : prefix + ".w_2", x.dtype(), new long[]{c}, 1f);
        // not createTemp("batch_norm"): that counter numbers the default-named layers, so temps would skip numbers
        Var y = block().createTemp("batch_norm.tmp");
        Var savedMean = block().createTemp("batch_norm.tmp");
        Var savedVar = block().createTemp("batch_norm.tmp");
        block().appendOp("batch_norm",
                Map.of("X", List.of(x.name()), "Scale", List.of(scale.name()), "Bias", List.of(bias.name()),
                        "Mean", List.of(mean.name()), "Variance", List.of(var.name())),
                Map.of("Y", List.of(y.name()), "MeanOut", List.of(mean.name()), "VarianceOut", List.of(var.name()),
                        "SavedMean", List.of(savedMean.name()), "SavedVariance", List.of(savedVar.name())),
                Map.of("is_test", isTest, "momentum", momentum, "epsilon", epsilon));
        return y;
    }

    public Var batchNorm(Var x, boolean isTest) {
        return batchNorm(x, isTest, 0.9f, 1e-5f);
    }

    /**
     * A 2-D convolution of NCHW x with numFilters square filters (Paddle's {@code conv2d}): stride and zero padding
     * on every side, a bias per filter, then act (null for none). See {@link #conv2d(Var, int, int[], int[], int[],
     * String, int[], int, String, String, ParamAttr, ParamAttr)}.
     */
    public Var conv2d(Var x, int numFilters, int filterSize, int stride, int padding, String act) {
        return conv2d(x, numFilters, filterSize, stride, padding, 1, 1, act, true);
    }

    /** As {@link #conv2d(Var, int, int, int, int, String)} with dilation and groups, and without a bias if not bias. */
    public Var conv2d(Var x, int numFilters, int filterSize, int stride, int padding, int dilation, int groups,
                      String act, boolean bias) {
        return conv2d(x, numFilters, new int[]{filterSize, filterSize}, new int[]{stride, stride},
                new int[]{padding, padding}, "EXPLICIT", new int[]{dilation, dilation}, groups, act, null,
                ParamAttr.DEFAULT, bias ? ParamAttr.DEFAULT : null);
    }

    /**
     * Paddle's {@code conv2d} in full: filterSize, stride and dilation [h, w]; padding [h, w] or [top, bottom, left,
     * right], used when paddingAlgorithm is EXPLICIT (SAME and VALID decide it themselves). The filter is
     * {@code <prefix>.w_0} [numFilters, channels / groups, kh, kw] (PyTorch's Conv2d layout), Kaiming-normal as Paddle
     * initialises it, and the bias {@code <prefix>.b_0} [numFilters], zeros, added with {@code elementwise_add}
     * (axis 1) as Paddle does; a null {@code bias} (Paddle's bias_attr=False) adds none. groups equal to the channels,
     * with numFilters a multiple of them, makes a {@code depthwise_conv2d}.
     */
    public Var conv2d(Var x, int numFilters, int[] filterSize, int[] stride, int[] padding, String paddingAlgorithm,
                      int[] dilation, int groups, String act, String name, ParamAttr weight, ParamAttr bias) {
        long[] xs = x.shape();
        if (xs.length != 4 || xs[1] < 1) {
            throw new IrException("conv2d layer: input " + x.name() + " " + java.util.Arrays.toString(xs)
                    + " must be NCHW with known channels; reshape [N, C*H*W] data to [N, C, H, W] first");
        }
        long c = xs[1];
        if (groups < 1 || c % groups != 0 || numFilters % groups != 0) {
            throw new IrException("conv2d layer: groups " + groups + " must divide the input's " + c
                    + " channels and the " + numFilters + " filters");
        }
        String prefix = prefix("conv2d", name, weight.name(), bias == null ? "" : bias.name());
        Var w = createParameter(weight, prefix + ".w_0", x.dtype(),
                new long[]{numFilters, c / groups, filterSize[0], filterSize[1]}, Initializer.kaimingNormal());
        boolean depthwise = groups > 1 && groups == c && numFilters % c == 0;
        Var y = op(depthwise ? "depthwise_conv2d" : "conv2d", "conv2d.tmp",
                Map.of("Input", List.of(x.name()), "Filter", List.of(w.name())), List.of("Output"),
                Map.of("strides", stride, "paddings", padding, "padding_algorithm", paddingAlgorithm,
                        "dilations", dilation, "groups", groups))[0];
        if (bias != null) {
            Var b = createParameter(bias, prefix + ".b_0", x.dtype(), new long[]{numFilters}, Initializer.constant(0f));
            y = op("elementwise_add", Map.of("X", List.of(y.name()), "Y", List.of(b.name())), List.of("Out"),
                    Map.of("axis", 1))[0];
        }
        return act == null ? y : activation(act, y);
    }

    /** Paddle's {@code pool2d}: max or avg ("max", "avg") over square windows with a stride and zero padding. */
    public Var pool2d(Var x, int poolSize, String poolType, int poolStride, int poolPadding) {
        return pool2d(x, new int[]{poolSize, poolSize}, poolType, new int[]{poolStride, poolStride},
                new int[]{poolPadding, poolPadding}, false, false, true);
    }

    /**
     * Paddle's {@code pool2d} in full: poolSize and poolStride [h, w], poolPadding [h, w] or [top, bottom, left,
     * right]; globalPooling pools each channel to 1 x 1, ceilMode keeps a last partial window, exclusive averages over
     * the window's unpadded pixels only.
     */
    public Var pool2d(Var x, int[] poolSize, String poolType, int[] poolStride, int[] poolPadding,
                      boolean globalPooling, boolean ceilMode, boolean exclusive) {
        return unary("pool2d", x, Map.of("pooling_type", poolType, "ksize", poolSize, "strides", poolStride,
                "paddings", poolPadding, "global_pooling", globalPooling, "ceil_mode", ceilMode,
                "exclusive", exclusive));
    }

    /** Adaptive max or avg pooling to outputSize [h, w] (PyTorch's adaptive_avg_pool2d, adaptive_max_pool2d). */
    public Var adaptivePool2d(Var x, int[] outputSize, String poolType) {
        return unary("pool2d", x, Map.of("pooling_type", poolType, "ksize", outputSize, "adaptive", true));
    }

    /** Group normalisation of NCHW x over groups of channels (Paddle's {@code group_norm}), epsilon 1e-5. */
    public Var groupNorm(Var x, int groups) {
        return groupNorm(x, groups, 1e-5f, null, null, ParamAttr.DEFAULT, ParamAttr.DEFAULT);
    }

    /**
     * As {@link #groupNorm(Var, int)} with epsilon, act (null for none), the layer's name and the attributes of its
     * scale {@code <prefix>.w_0} (ones) and bias {@code <prefix>.b_0} (zeros), one value per channel.
     */
    public Var groupNorm(Var x, int groups, float epsilon, String act, String name, ParamAttr scaleAttr,
                         ParamAttr biasAttr) {
        long c = x.shape().length >= 2 ? x.shape()[1] : -1;
        if (c < 1) {
            throw new IrException("group_norm layer: input " + x.name() + " " + java.util.Arrays.toString(x.shape())
                    + " must be [N, C, ...] with known channels");
        }
        String prefix = prefix("group_norm", name, scaleAttr.name(), biasAttr.name());
        Var scale = createParameter(scaleAttr, prefix + ".w_0", x.dtype(), new long[]{c}, Initializer.constant(1f));
        Var bias = createParameter(biasAttr, prefix + ".b_0", x.dtype(), new long[]{c}, Initializer.constant(0f));
        Var y = op("group_norm", "group_norm.tmp", Map.of("X", List.of(x.name()), "Scale", List.of(scale.name()),
                "Bias", List.of(bias.name())), List.of("Y", "Mean", "Variance"),
                Map.of("groups", groups, "epsilon", epsilon))[0];
        return act == null ? y : activation(act, y);
    }
}
