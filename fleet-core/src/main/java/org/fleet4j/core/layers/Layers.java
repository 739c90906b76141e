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
        return fc(x, size, 1, act, name, weight, bias);
    }

    /**
     * As {@link #fc(Var, int, String, String, ParamAttr, ParamAttr)} with Paddle's num_flatten_dims: the first
     * {@code numFlattenDims} dims of x are kept and the rest form each input row; x [B, T, E] with numFlattenDims 2 is
     * a linear layer over the last dim, giving [B, T, size].
     */
    public Var fc(Var x, int size, int numFlattenDims, String act, String name, ParamAttr weight, ParamAttr bias) {
        long[] xs = x.shape();
        if (numFlattenDims < 1 || numFlattenDims >= xs.length) {
            throw new IrException("fc: num_flatten_dims " + numFlattenDims + " must be in [1, " + (xs.length - 1)
                    + "] for input " + x.name() + " " + java.util.Arrays.toString(xs));
        }
        if (xs.length != numFlattenDims + 1) {
            long[] target = new long[numFlattenDims + 1];
            target[numFlattenDims] = -1;
            x = numFlattenDims == 1 ? reshape(x, -1, flattenedWidth(xs)) : reshape(x, target);
            xs = x.shape();
        }
        long in = xs[numFlattenDims];
        if (in < 0) {
            throw new IrException("fc input " + x.name() + " " + java.util.Arrays.toString(xs)
                    + " has an unknown input width");
        }
        String prefix = prefix("fc", name, weight.name(), bias.name());
        Var w = createParameter(weight, prefix + ".w_0", x.dtype(), new long[]{in, size}, Initializer.xavierUniform());
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
            case "relu", "sigmoid", "tanh", "gelu", "softmax", "silu", "leaky_relu", "hard_swish" -> unary(act, x, Map.of());
            default -> throw new IrException("unknown activation '" + act
                    + "' (relu, sigmoid, tanh, gelu, softmax, silu, leaky_relu, hard_swish)");
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

    /** GELU in its exact form, or the tanh approximation (PyTorch's approximate='tanh') with {@code approximate}. */
    public Var gelu(Var x, boolean approximate) {
        return unary("gelu", x, Map.of("approximate", approximate));
    }

    public Var silu(Var x) {
        return unary("silu", x, Map.of());
    }

    /** x for x >= 0, alpha x below. */
    public Var leakyRelu(Var x, float alpha) {
        return unary("leaky_relu", x, Map.of("alpha", alpha));
    }

    /** x relu6(x + 3) / 6 (Paddle's default threshold 6, scale 6, offset 3). */
    public Var hardSwish(Var x) {
        return unary("hard_swish", x, Map.of());
    }

    /** softmax along {@code axis} (negative counts from the end). */
    public Var softmax(Var x, int axis) {
        return unary("softmax", x, Map.of("axis", axis));
    }

    /** log(softmax(x)) along {@code axis}, computed without forming the softmax. */
    public Var logSoftmax(Var x, int axis) {
        return unary("log_softmax", x, Map.of("axis", axis));
    }

    /** The per-row loss [batch, 1] of softmax + cross entropy against integer labels. */
    public Var softmaxWithCrossEntropy(Var logits, Var label) {
        return op("softmax_with_cross_entropy", Map.of("Logits", List.of(logits.name()), "Label", List.of(label.name())),
                List.of("Softmax", "Loss"), Map.of())[1];
    }

    /**
     * As {@link #softmaxWithCrossEntropy(Var, Var)} over logits [..., classes] with labels [...] or [..., 1]:
     * positions labelled {@code ignoreIndex} have loss 0 and no gradient, and {@code labelSmoothing} eps mixes the
     * one-hot target with the uniform one (PyTorch's cross_entropy(ignore_index=, label_smoothing=)).
     */
    public Var softmaxWithCrossEntropy(Var logits, Var label, int ignoreIndex, float labelSmoothing) {
        return op("softmax_with_cross_entropy", Map.of("Logits", List.of(logits.name()), "Label", List.of(label.name())),
                List.of("Softmax", "Loss"), Map.of("ignore_index", ignoreIndex, "label_smoothing", labelSmoothing))[1];
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

    /** Out's dim d is x's dim perm[d]. */
    public Var transpose(Var x, int... perm) {
        return unary("transpose", x, Map.of("axis", perm));
    }

    /** x's dims startAxis..stopAxis merged into one (a view). */
    public Var flatten(Var x, int startAxis, int stopAxis) {
        return unary("flatten", x, Map.of("start_axis", startAxis, "stop_axis", stopAxis));
    }

    /** x without the size-1 dims of axes (every size-1 dim when none are given). */
    public Var squeeze(Var x, int... axes) {
        return unary("squeeze", x, Map.of("axes", axes));
    }

    /** x with a size-1 dim inserted at each of axes. */
    public Var unsqueeze(Var x, int... axes) {
        return unary("unsqueeze", x, Map.of("axes", axes));
    }

    /** Elements [starts[i], ends[i]) along each of axes (negative indices count from the end). */
    public Var slice(Var x, int[] axes, long[] starts, long[] ends) {
        return op("slice", Map.of("Input", List.of(x.name())), List.of("Out"),
                Map.of("axes", axes, "starts", starts, "ends", ends))[0];
    }

    /** x cut into {@code num} equal parts along axis. */
    public List<Var> split(Var x, int num, int axis) {
        Map<String, List<String>> outs = new LinkedHashMap<>();
        List<Var> parts = new java.util.ArrayList<>();
        for (int j = 0; j < num; j++) {
            parts.add(block().createTemp("split"));
        }
        outs.put("Out", parts.stream().map(Var::name).toList());
        block().appendOp("split", Map.of("X", List.of(x.name())), outs, Map.of("num", num, "axis", axis));
        return parts;
    }

    /** xs (one shape) joined along a new dim at axis. */
    public Var stack(List<Var> xs, int axis) {
        return op("stack", Map.of("X", xs.stream().map(Var::name).toList()), List.of("Y"), Map.of("axis", axis))[0];
    }

    /** x broadcast to shape (-1 keeps x's dim). */
    public Var expand(Var x, long... shape) {
        return unary("expand", x, Map.of("shape", shape));
    }

    /** condition ? x : y elementwise, broadcasting (condition is true where nonzero). */
    public Var where(Var condition, Var x, Var y) {
        return op("where", Map.of("Condition", List.of(condition.name()), "X", List.of(x.name()), "Y",
                List.of(y.name())), List.of("Out"), Map.of())[0];
    }

    /** x on its lower (tril) or upper (triu) triangle, offset by diagonal, and 0 elsewhere. */
    public Var trilTriu(Var x, int diagonal, boolean lower) {
        return unary("tril_triu", x, Map.of("diagonal", diagonal, "lower", lower));
    }

    /** start, start + step, ... below end, of dtype (position ids: arange(0, T, 1, INT64)). */
    public Var arange(float start, float end, float step, DType dtype) {
        return op("arange", Map.of(), List.of("Out"), Map.of("start", start, "end", end, "step", step,
                "dtype", dtype.displayName()))[0];
    }

    /** A constant tensor of this shape, every element {@code value}. */
    public Var fillConstant(long[] shape, DType dtype, float value) {
        return op("fill_constant", Map.of(), List.of("Out"), Map.of("shape", shape, "dtype", dtype.displayName(),
                "value", value))[0];
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
        return embedding(ids, vocab, dim, isSparse, name, table, Initializer.xavierUniform());
    }

    /**
     * The rows of the table for ids [N] or [N, 1] ([N, dim]), or for sequences of ids [batch, seq] with seq known
     * ([batch, seq, dim]: the ids are looked up as one column and the rows reshaped).
     */
    private Var embedding(Var ids, long vocab, long dim, boolean isSparse, String name, ParamAttr table,
                          Initializer defaultInit) {
        String prefix = prefix("embedding", name, table.name());
        Var w = createParameter(table, prefix + ".w_0", DType.F32, new long[]{vocab, dim}, defaultInit);
        long[] s = ids.shape();
        boolean sequences = s.length == 2 && s[1] != 1;
        if (sequences && s[1] < 0) {
            throw new IrException("embedding of " + ids.name() + " " + java.util.Arrays.toString(s)
                    + ": the sequence length (dim 1) must be known when the program is built");
        }
        Var column = sequences ? reshape(ids, -1) : ids;
        Var rows = op("lookup_table", Map.of("W", List.of(w.name()), "Ids", List.of(column.name())), List.of("Out"),
                Map.of("is_sparse", isSparse))[0];
        return sequences ? reshape(rows, -1, s[1], dim) : rows;
    }

    // ---- transformer layers, named so that a nanoGPT state_dict pairs with them (TorchStateDict.byLayerNames) ----

    /** nanoGPT's initialisation of linear and embedding weights. */
    private static final Initializer TRANSFORMER_WEIGHTS = Initializer.normal(0f, 0.02f);

    /**
     * Position embeddings for sequences of {@code seqLen} (known when built) out of a table of {@code blockSize}
     * positions: the table's rows 0..seqLen-1, [seqLen, dim], to add to token embeddings [batch, seqLen, dim]. Its table
     * is {@code <name>.w_0} (default prefix embedding_n).
     */
    public Var positionEmbedding(long seqLen, long blockSize, long dim, String name, ParamAttr table) {
        if (seqLen > blockSize || seqLen < 1) {
            throw new IrException("position embedding" + (name == null ? "" : " " + name) + ": a sequence of " + seqLen
                    + " positions does not fit block_size " + blockSize + "; use sequences of 1.." + blockSize
                    + " tokens or a larger block_size");
        }
        Var positions = arange(0, seqLen, 1, DType.I64);
        return embedding(positions, blockSize, dim, false, name, table, TRANSFORMER_WEIGHTS);
    }

    /**
     * Token embeddings [batch, seq, dim] of ids [batch, seq] (PyTorch's nn.Embedding, initialised as nanoGPT does:
     * normal with std 0.02); the table is {@code <name>.w_0}.
     */
    public Var tokenEmbedding(Var ids, long vocab, long dim, String name, ParamAttr table) {
        return embedding(ids, vocab, dim, false, name, table, TRANSFORMER_WEIGHTS);
    }

    /**
     * Layer normalisation over the dims of x from beginNormAxis on (PyTorch's LayerNorm(normalized_shape) for the
     * last x.rank - beginNormAxis dims), with a learnable scale {@code <name>.w_0} (ones) and bias {@code <name>.b_0}
     * (zeros), default prefix layer_norm_n.
     */
    public Var layerNorm(Var x, int beginNormAxis, float epsilon, String name, ParamAttr scaleAttr, ParamAttr biasAttr) {
        long[] xs = x.shape();
        if (beginNormAxis < 1 || beginNormAxis >= xs.length) {
            throw new IrException("layerNorm of " + x.name() + " " + java.util.Arrays.toString(xs) + ": beginNormAxis "
                    + beginNormAxis + " must be in [1, " + (xs.length - 1) + "]");
        }
        long right = 1;
        for (int d = beginNormAxis; d < xs.length; d++) {
            right *= xs[d];
        }
        String prefix = prefix("layer_norm", name, scaleAttr.name(), biasAttr.name());
        Var scale = createParameter(scaleAttr, prefix + ".w_0", x.dtype(), new long[]{right}, Initializer.constant(1f));
        Var bias = createParameter(biasAttr, prefix + ".b_0", x.dtype(), new long[]{right}, Initializer.constant(0f));
        return op("layer_norm", Map.of("X", List.of(x.name()), "Scale", List.of(scale.name()), "Bias",
                List.of(bias.name())), List.of("Y", "Mean", "Variance"),
                Map.of("begin_norm_axis", beginNormAxis, "epsilon", epsilon))[0];
    }

    /** Layer normalisation of the last dim, epsilon 1e-5 (PyTorch's LayerNorm(n_embd)). */
    public Var layerNorm(Var x, String name) {
        return layerNorm(x, x.shape().length - 1, 1e-5f, name, ParamAttr.DEFAULT, ParamAttr.DEFAULT);
    }

    /**
     * A linear layer over the last dim of x: act(x W^T + b) with W [size, in] as PyTorch's nn.Linear keeps it (so a
     * state_dict loads without transposing, and OpenBLAS multiplies these shapes about 8 % faster than with W [in,
     * size]), initialised as nanoGPT's (normal, std 0.02; zero bias); parameters {@code <name>.w_0} and
     * {@code <name>.b_0}; one fused_gemm_epilogue op, act "none" or "gelu".
     */
    private Var linear(Var x, int size, String name, String act) {
        long in = x.shape()[x.shape().length - 1];
        Var w = createParameter(ParamAttr.DEFAULT, name + ".w_0", x.dtype(), new long[]{size, in}, TRANSFORMER_WEIGHTS);
        Var b = createParameter(ParamAttr.DEFAULT, name + ".b_0", x.dtype(), new long[]{size}, Initializer.constant(0f));
        return op("fused_gemm_epilogue", Map.of("X", List.of(x.name()), "Y", List.of(w.name()), "Bias", List.of(b.name())),
                act.equals("none") ? List.of("Out") : List.of("Out", "ReserveSpace"),
                Map.of("trans_y", true, "activation", act))[0];
    }

    /**
     * Multi-head self-attention over x [batch, seq, width] (seq known when built), as nanoGPT's CausalSelfAttention:
     * one fused projection {@code <name>.c_attn} to queries, keys and values (its weight [3 width, width], as
     * PyTorch's), nHead heads of width / nHead, softmax(q k^T / sqrt(head width) + masks) v (the
     * self_attention op), and the output projection {@code <name>.c_proj}. {@code causal} lets position t attend only to positions up to t;
     * {@code keyPadding}, when not null, is [batch, seq] with 1 for a real token and 0 for padding, which no position
     * attends to. Dropout of probability {@code dropout} (none at 0) on the attention weights and the output, off when
     * {@code isTest}. Default prefix multi_head_attention_n.
     */
    public Var multiHeadAttention(Var x, int nHead, boolean causal, Var keyPadding, float dropout, boolean isTest,
                                  String name) {
        long[] xs = x.shape();
        String prefix = prefix("multi_head_attention", name, (String) null);
        if (xs.length != 3 || xs[1] < 0 || xs[2] < 0) {
            throw new IrException("multiHeadAttention " + prefix + ": x " + x.name() + " " + java.util.Arrays.toString(xs)
                    + " must be [batch, seq, width] with seq and width known when the program is built");
        }
        long width = xs[2];
        if (nHead < 1 || width % nHead != 0) {
            throw new IrException("multiHeadAttention " + prefix + ": " + nHead + " heads do not divide the width "
                    + width + "; choose n_head dividing n_embd");
        }
        Var qkv = linear(x, (int) (3 * width), prefix + ".c_attn", "none");
        Map<String, List<String>> ins = new LinkedHashMap<>();
        ins.put("QKV", List.of(qkv.name()));
        if (keyPadding != null) {
            ins.put("KeyPadding", List.of(keyPadding.name()));
        }
        boolean dropsWeights = dropout > 0 && !isTest;
        Var[] attention = op("self_attention", ins, dropsWeights ? List.of("Out", "Softmax", "Mask")
                : List.of("Out", "Softmax"), Map.of("num_heads", nHead, "scale", (float) (1 / Math.sqrt(width / nHead)),
                "causal", causal, "dropout_prob", dropout, "is_test", isTest, "seed", nextSeed()));
        Var out = linear(attention[0], (int) width, prefix + ".c_proj", "none");
        return dropout > 0 ? dropout(out, dropout, isTest) : out;
    }

    /**
     * A pre-norm transformer block as nanoGPT's Block: x + attn(ln_1(x)), then h + mlp(ln_2(h)) with the MLP
     * c_fc (4 width, GELU exact) and c_proj (width), dropout after it. Its parameters are {@code <name>.ln_1.w_0},
     * {@code <name>.attn.c_attn.w_0}, {@code <name>.attn.c_proj.w_0}, {@code <name>.ln_2.w_0},
     * {@code <name>.mlp.c_fc.w_0}, {@code <name>.mlp.c_proj.w_0} and their {@code .b_0} biases; default prefix
     * transformer_block_n. See {@link #multiHeadAttention} for x, the masks and dropout.
     */
    public Var transformerBlock(Var x, int nHead, boolean causal, Var keyPadding, float dropout, boolean isTest,
                                String name) {
        String prefix = prefix("transformer_block", name, (String) null);
        Var h = add(x, multiHeadAttention(layerNorm(x, prefix + ".ln_1"), nHead, causal, keyPadding, dropout, isTest,
                prefix + ".attn"));
        long width = x.shape()[2];
        Var mlp = linear(linear(layerNorm(h, prefix + ".ln_2"), (int) (4 * width), prefix + ".mlp.c_fc", "gelu"),
                (int) width, prefix + ".mlp.c_proj", "none");
        return add(h, dropout > 0 ? dropout(mlp, dropout, isTest) : mlp);
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
        String layer = "conv2d layer" + (name != null ? " " + name : "") + " on " + x.name() + " "
                + java.util.Arrays.toString(xs);
        if (groups < 1 || c % groups != 0 || numFilters % groups != 0) {
            throw new IrException(layer + ": groups " + groups + " must divide the input's " + c + " channels and the "
                    + numFilters + " filters; use a common divisor of both (1 for an ordinary convolution, " + c
                    + " for a depthwise one with a multiple of " + c + " filters)");
        }
        String prefix = prefix("conv2d", name, weight.name(), bias == null ? "" : bias.name());
        Var w = createParameter(weight, prefix + ".w_0", x.dtype(),
                new long[]{numFilters, c / groups, filterSize[0], filterSize[1]}, Initializer.kaimingNormal());
        boolean depthwise = groups > 1 && groups == c && numFilters % c == 0;
        Var y;
        try {
            y = op(depthwise ? "depthwise_conv2d" : "conv2d", "conv2d.tmp",
                    Map.of("Input", List.of(x.name()), "Filter", List.of(w.name())), List.of("Output"),
                    Map.of("strides", stride, "paddings", padding, "padding_algorithm", paddingAlgorithm,
                            "dilations", dilation, "groups", groups))[0];
        } catch (IrException e) {
            throw new IrException(layer + ": " + e.getMessage(), e);
        }
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
        try {
            return unary("pool2d", x, Map.of("pooling_type", poolType, "ksize", poolSize, "strides", poolStride,
                    "paddings", poolPadding, "global_pooling", globalPooling, "ceil_mode", ceilMode,
                    "exclusive", exclusive));
        } catch (IrException e) {
            throw new IrException("pool2d layer on " + x.name() + " " + java.util.Arrays.toString(x.shape()) + ": "
                    + e.getMessage(), e);
        }
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
