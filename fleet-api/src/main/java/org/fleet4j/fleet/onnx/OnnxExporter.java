package org.fleet4j.fleet.onnx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.OperatorSetIdProto;

/**
 * Translates a forward-only program (an inference model's) into an ONNX model of opset {@value #OPSET}: one or a few
 * ONNX nodes per op, the parameters as initializers, the feeds as inputs and the fetches as outputs. Ops that exist
 * only for training (losses, metrics, optimizers) and training-mode dropout or batch norm have no ONNX form: the
 * whole program is checked before anything is built, and the first such op fails the export naming it.
 */
public final class OnnxExporter {
    public static final int OPSET = 17;
    /** The IR version that opset 17 came with (ONNX 1.12), so that older runtimes read the model too. */
    static final int IR_VERSION = 8;
    private static final Set<String> EXPORTABLE = new TreeSet<>(Set.of("matmul", "elementwise_add", "elementwise_sub",
            "elementwise_mul", "elementwise_div", "relu", "sigmoid", "tanh", "gelu", "softmax", "scale", "reshape",
            "concat", "dropout", "lookup_table", "batch_norm", "sum", "conv2d", "depthwise_conv2d", "pool2d", "flatten"));
    private static final Map<String, String> ELEMENTWISE = Map.of("elementwise_add", "Add", "elementwise_sub", "Sub",
            "elementwise_mul", "Mul", "elementwise_div", "Div");

    private OnnxExporter() {
    }

    /**
     * The ONNX model of {@code program} with the parameter values in {@code scope}. Fails naming the first op that
     * cannot be exported (its type and output var) before building anything.
     */
    public static ModelProto export(Program program, Scope scope, List<String> feeds, List<String> fetches) {
        Block b = program.globalBlock();
        b.ops().forEach(op -> checkExportable(op, b));
        OnnxGraph g = new OnnxGraph("fleet4j");
        for (String f : feeds) {
            Var v = b.var(f);
            g.input(f, v.dtype(), v.shape());
        }
        for (Op op : b.ops()) {
            for (String in : op.allInputs()) {
                Var v = b.var(in);
                if (!g.has(in) && v.persistable() && !v.isData()) {
                    g.initializer(in, scope.get(in));
                }
            }
            convert(g, b, op);
        }
        for (String f : fetches) {
            Var v = b.var(f);
            g.output(f, v.dtype(), v.shape());
        }
        return ModelProto.newBuilder().setIrVersion(IR_VERSION).setProducerName("Fleet4J")
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(OPSET))
                .setGraph(g.build()).build();
    }

    /**
     * Writes {@code model} to {@code file} through a temporary file in the same folder, so a failed write leaves no
     * half file. The folder must exist, as for a checkpoint: a mistyped path is refused rather than made.
     */
    public static void write(ModelProto model, Path file) {
        Path temporary = temporaryFor(file);
        Path target = file.toAbsolutePath();
        try {
            Files.write(temporary, model.toByteArray());
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException ignored) {
                // the write's own failure is the one to report
            }
            throw new UncheckedIOException("ONNX model " + file + " cannot be written: " + e, e);
        }
    }

    /**
     * Fails, naming {@code file}, when {@link #write} could not write it: it is a folder, or its folder does not exist
     * or takes no new files. Lets a program check its output path before it spends time training.
     */
    public static void checkWritable(Path file) {
        try {
            Files.delete(Files.createFile(temporaryFor(file)));
        } catch (IOException e) {
            throw new IllegalArgumentException("ONNX model " + file + " cannot be written (" + e + "); choose a writable"
                    + " file", e);
        }
    }

    private static Path temporaryFor(Path file) {
        Path target = file.toAbsolutePath();
        if (Files.isDirectory(target)) {
            throw new IllegalArgumentException("ONNX model " + file + " is a folder; name a file in it, e.g. "
                    + target.resolve("model.onnx"));
        }
        if (!Files.isDirectory(target.getParent())) {
            throw new IllegalArgumentException("ONNX model " + file + ": folder " + target.getParent()
                    + (Files.exists(target.getParent()) ? " is not a folder" : " does not exist; create it first"));
        }
        return target.resolveSibling("." + target.getFileName() + ".tmp");
    }

    private static Set<String> exportable() {
        Set<String> all = new TreeSet<>(EXPORTABLE);
        all.addAll(TransformerOnnx.TYPES);
        return all;
    }

    private static void checkExportable(Op op, Block b) {
        String why = null;
        if (TransformerOnnx.TYPES.contains(op.type())) {
            why = TransformerOnnx.whyNot(op);
        } else if (!EXPORTABLE.contains(op.type())) {
            why = "has no ONNX form in this exporter (it exports " + String.join(", ", exportable())
                    + "); fetch a var computed before it";
        } else if (op.type().equals("dropout") && !op.boolAttr("is_test")) {
            why = "is in training mode (is_test=false); build the inference program with dropout(x, p, true)";
        } else if (op.type().equals("batch_norm") && !op.boolAttr("is_test")) {
            why = "is in training mode (is_test=false); build the inference program with batchNorm(x, true)";
        } else if (op.type().equals("gelu") && op.hasAttr("approximate") && op.boolAttr("approximate")) {
            why = "is GELU's tanh form (approximate=true), which the exporter does not write (it exports the exact form)";
        } else if (op.type().equals("lookup_table") && op.<Long>attr("padding_idx") != -1L) {
            why = "has padding_idx " + op.<Long>attr("padding_idx") + ", which the exporter does not carry over";
        } else if (op.type().equals("pool2d")) {
            why = Pooling.unsupported(op, b);
        } else if (op.type().equals("flatten")) {
            why = unknownDimsAfterFlatten(op, b);
        }
        if (why != null) {
            throw new IllegalArgumentException("ONNX export: op " + op.type() + " (output '" + mainOutput(op) + "') " + why);
        }
    }

    /** The op's first output in its spec's slot order: a layer may build the slot map with Map.of, in no set order. */
    private static String mainOutput(Op op) {
        if (OpRegistry.contains(op.type())) {
            for (String slot : OpRegistry.get(op.type()).outputs()) {
                if (!op.output(slot).isEmpty()) {
                    return op.output(slot).getFirst();
                }
            }
        }
        return op.allOutputs().getFirst();
    }

    private static void convert(OnnxGraph g, Block b, Op op) {
        String type = op.type();
        String out = mainOutput(op);
        switch (type) {
            case "matmul" -> matmul(g, b, op);
            case "elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div" -> elementwise(g, b, op);
            case "relu", "sigmoid", "tanh" -> g.node(capitalised(type), List.of(g.value(op.in("X"))),
                    List.of(g.define(out)), Map.of());
            case "softmax" -> g.node("Softmax", List.of(g.value(op.in("X"))), List.of(g.define(out)),
                    Map.of("axis", op.intAttr("axis")));
            case "gelu" -> gelu(g, b, op);
            case "scale" -> scale(g, b, op);
            case "reshape" -> g.node("Reshape", List.of(g.value(op.in("X")),
                    g.constant(out + "/shape", Tensor.ofLongs(op.longsAttr("shape"), op.longsAttr("shape").length))),
                    List.of(g.define(out)), Map.of());
            case "concat" -> g.node("Concat", op.input("X").stream().map(g::value).toList(), List.of(g.define(out)),
                    Map.of("axis", op.intAttr("axis")));
            case "sum" -> g.node("Sum", op.input("X").stream().map(g::value).toList(), List.of(g.define(out)), Map.of());
            case "dropout" -> dropout(g, b, op);
            case "lookup_table" -> lookupTable(g, b, op);
            case "batch_norm" -> batchNorm(g, b, op);
            case "conv2d", "depthwise_conv2d" -> conv(g, op);
            case "pool2d" -> Pooling.convert(g, b, op);
            case "flatten" -> flatten(g, b, op);
            case String t when TransformerOnnx.TYPES.contains(t) -> TransformerOnnx.convert(g, b, op);
            default -> throw new IllegalStateException("ONNX export: " + type + " passed the check but has no conversion");
        }
    }

    private static String capitalised(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** Out = alpha op(X) op(Y): ONNX MatMul multiplies like Fleet4J's matmul (leading dims of X batch over a matrix Y). */
    private static void matmul(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        String x = transposedIf(g, b, op.in("X"), op.boolAttr("transpose_X"));
        String y = transposedIf(g, b, op.in("Y"), op.boolAttr("transpose_Y"));
        float alpha = op.floatAttr("alpha");
        if (alpha == 1f) {
            g.node("MatMul", List.of(x, y), List.of(g.define(out)), Map.of());
            return;
        }
        String product = g.fresh(out + "/product");
        g.node("MatMul", List.of(x, y), List.of(product), Map.of());
        g.node("Mul", List.of(product, g.constant(out + "/alpha", scalarLike(b, op.in("X"), alpha))),
                List.of(g.define(out)), Map.of());
    }

    static String transposedIf(OnnxGraph g, Block b, String var, boolean transpose) {
        if (!transpose) {
            return g.value(var);
        }
        int rank = b.var(var).shape().length;
        long[] perm = new long[rank];
        for (int i = 0; i < rank; i++) {
            perm[i] = i;
        }
        perm[rank - 2] = rank - 1;
        perm[rank - 1] = rank - 2;
        String t = g.fresh(var + "/transposed");
        g.node("Transpose", List.of(g.value(var)), List.of(t), Map.of("perm", perm));
        return t;
    }

    /** Fleet4J's {@code axis} puts a lower-rank Y at that dim of X; ONNX aligns trailing dims, so Y gets trailing 1s. */
    private static void elementwise(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        String y = g.value(op.in("Y"));
        int xRank = b.var(op.in("X")).shape().length;
        int yRank = b.var(op.in("Y")).shape().length;
        int axis = op.intAttr("axis");
        if (axis >= 0 && axis + yRank < xRank) {
            long[] trailing = new long[xRank - axis - yRank];
            for (int i = 0; i < trailing.length; i++) {
                trailing[i] = yRank + i;
            }
            String unsqueezed = g.fresh(op.in("Y") + "/unsqueezed");
            g.node("Unsqueeze", List.of(y, g.constant(out + "/axes", Tensor.ofLongs(trailing, trailing.length))),
                    List.of(unsqueezed), Map.of());
            y = unsqueezed;
        }
        g.node(ELEMENTWISE.get(op.type()), List.of(g.value(op.in("X")), y), List.of(g.define(out)), Map.of());
    }

    private static void gelu(OnnxGraph g, Block b, Op op) {
        exactGelu(g, g.value(op.in("X")), b.var(op.in("X")).dtype(), op.out("Out"));
    }

    /**
     * The exact GELU that Fleet4J computes, x * (1 + erf(x / sqrt 2)) / 2 (ONNX has Gelu only from opset 20), of the
     * ONNX value {@code x}, written as the next value of the var {@code out}.
     */
    static void exactGelu(OnnxGraph g, String x, DType dtype, String out) {
        String scaled = g.fresh(out + "/x_over_sqrt2");
        g.node("Mul", List.of(x, g.constant(out + "/inv_sqrt2", scalar(dtype, (float) (1 / Math.sqrt(2))))),
                List.of(scaled), Map.of());
        String erf = g.fresh(out + "/erf");
        g.node("Erf", List.of(scaled), List.of(erf), Map.of());
        String onePlus = g.fresh(out + "/one_plus_erf");
        g.node("Add", List.of(erf, g.constant(out + "/one", scalar(dtype, 1f))), List.of(onePlus), Map.of());
        String half = g.fresh(out + "/half_x");
        g.node("Mul", List.of(x, g.constant(out + "/half", scalar(dtype, 0.5f))), List.of(half), Map.of());
        g.node("Mul", List.of(half, onePlus), List.of(g.define(out)), Map.of());
    }

    /** scale * x + bias, or scale * (x + bias) when bias_after_scale is false. */
    private static void scale(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        float s = op.floatAttr("scale");
        float bias = op.floatAttr("bias");
        boolean after = op.boolAttr("bias_after_scale");
        String v = g.value(op.in("X"));
        String first = g.fresh(out + (after ? "/scaled" : "/biased"));
        if (after) {
            g.node("Mul", List.of(v, g.constant(out + "/scale", scalarLike(b, op.in("X"), s))), List.of(first), Map.of());
            g.node("Add", List.of(first, g.constant(out + "/bias", scalarLike(b, op.in("X"), bias))), List.of(g.define(out)), Map.of());
        } else {
            g.node("Add", List.of(v, g.constant(out + "/bias", scalarLike(b, op.in("X"), bias))), List.of(first), Map.of());
            g.node("Mul", List.of(first, g.constant(out + "/scale", scalarLike(b, op.in("X"), s))), List.of(g.define(out)), Map.of());
        }
    }

    /** At inference, upscale_in_train dropout is the identity and is removed; downgrade_in_infer scales by 1 - p. */
    private static void dropout(OnnxGraph g, Block b, Op op) {
        String x = g.value(op.in("X"));
        float p = op.floatAttr("dropout_prob");
        if (op.stringAttr("dropout_implementation").equals("upscale_in_train")) {
            g.alias(op.out("Out"), x);
        } else {
            g.node("Mul", List.of(x, g.constant(op.out("Out") + "/keep", scalarLike(b, op.in("X"), 1f - p))),
                    List.of(g.define(op.out("Out"))), Map.of());
        }
    }

    /** Rows of W for the ids: ONNX Gather on ids flattened to [N] gives Fleet4J's [N, dim]. */
    private static void lookupTable(OnnxGraph g, Block b, Op op) {
        String out = op.out("Out");
        String ids = g.value(op.in("Ids"));
        if (b.var(op.in("Ids")).shape().length == 2) {
            String flat = g.fresh(op.in("Ids") + "/flat");
            g.node("Reshape", List.of(ids, g.constant(out + "/ids_shape", Tensor.ofLongs(new long[]{-1}, 1))),
                    List.of(flat), Map.of());
            ids = flat;
        }
        g.node("Gather", List.of(g.value(op.in("W")), ids), List.of(g.define(out)), Map.of("axis", 0));
    }

    /** Inference batch norm with the running statistics; NHWC input is transposed to ONNX's channels-second and back. */
    private static void batchNorm(OnnxGraph g, Block b, Op op) {
        String y = op.out("Y");
        List<String> params = List.of(g.value(op.in("Scale")), g.value(op.in("Bias")), g.value(op.in("Mean")),
                g.value(op.in("Variance")));
        Map<String, Object> attrs = Map.of("epsilon", op.floatAttr("epsilon"));
        String x = g.value(op.in("X"));
        boolean nhwc = op.stringAttr("data_layout").equals("NHWC") && b.var(op.in("X")).shape().length == 4;
        if (!nhwc) {
            g.node("BatchNormalization", concat(x, params), List.of(g.define(y)), attrs);
            return;
        }
        String nchw = g.fresh(op.in("X") + "/nchw");
        g.node("Transpose", List.of(x), List.of(nchw), Map.of("perm", new long[]{0, 3, 1, 2}));
        String normalised = g.fresh(y + "/nchw");
        g.node("BatchNormalization", concat(nchw, params), List.of(normalised), attrs);
        g.node("Transpose", List.of(normalised), List.of(g.define(y)), Map.of("perm", new long[]{0, 2, 3, 1}));
    }

    /**
     * conv2d and depthwise_conv2d as ONNX Conv (the filter is already [out, in / groups, kh, kw]): explicit paddings
     * [top, bottom, left, right] become ONNX's [top, left, bottom, right]; Paddle's SAME, which puts the odd pixel at
     * the bottom and right and ignores the dilation, is SAME_UPPER with dilation 1.
     */
    private static void conv(OnnxGraph g, Op op) {
        long[] strides = longs(op.attr("strides"));
        String algorithm = op.stringAttr("padding_algorithm");
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("group", (long) op.intAttr("groups"));
        attrs.put("strides", strides);
        switch (algorithm) {
            case "SAME" -> {
                attrs.put("auto_pad", "SAME_UPPER");
                attrs.put("dilations", new long[]{1, 1});
            }
            case "VALID" -> {
                attrs.put("pads", new long[4]);
                attrs.put("dilations", longs(op.attr("dilations")));
            }
            default -> {
                attrs.put("pads", onnxPads(op.attr("paddings")));
                attrs.put("dilations", longs(op.attr("dilations")));
            }
        }
        g.node("Conv", List.of(g.value(op.in("Input")), g.value(op.in("Filter"))), List.of(g.define(op.out("Output"))),
                attrs);
    }

    /** Paddle's paddings, [h, w] or [top, bottom, left, right], as ONNX's pads [top, left, bottom, right]. */
    static long[] onnxPads(int[] p) {
        return p.length == 2 ? new long[]{p[0], p[1], p[0], p[1]} : new long[]{p[0], p[2], p[1], p[3]};
    }

    static long[] longs(int[] v) {
        long[] l = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            l[i] = v[i];
        }
        return l;
    }

    /**
     * flatten of dims start..stop as a Reshape: 0 (ONNX's "keep this dim") before them, -1 for the merged dim, and the
     * dims after them, which must be known.
     */
    private static void flatten(OnnxGraph g, Block b, Op op) {
        long[] x = b.var(op.in("X")).shape();
        int start = Math.floorMod(op.intAttr("start_axis"), Math.max(x.length, 1));
        int stop = Math.floorMod(op.intAttr("stop_axis"), Math.max(x.length, 1));
        long[] shape = new long[x.length - (stop - start)];
        for (int d = 0; d < start; d++) {
            shape[d] = 0;
        }
        shape[start] = -1;
        for (int d = stop + 1; d < x.length; d++) {
            shape[d - (stop - start)] = x[d];
        }
        String out = op.out("Out");
        g.node("Reshape", List.of(g.value(op.in("X")), g.constant(out + "/shape", Tensor.ofLongs(shape, shape.length))),
                List.of(g.define(out)), Map.of());
    }

    /** Why this flatten has no Reshape form (a dim after the merged ones is unknown), or null when it has one. */
    private static String unknownDimsAfterFlatten(Op op, Block b) {
        long[] x = b.var(op.in("X")).shape();
        int stop = Math.floorMod(op.intAttr("stop_axis"), Math.max(x.length, 1));
        for (int d = stop + 1; d < x.length; d++) {
            if (x[d] < 0) {
                return "keeps dim " + d + " of " + Arrays.toString(x) + ", which is unknown, and its Reshape"
                        + " can take only one unknown dim; give the input a known size there";
            }
        }
        return null;
    }

    private static List<String> concat(String first, List<String> rest) {
        return Stream.concat(Stream.of(first), rest.stream()).toList();
    }

    private static Tensor scalarLike(Block b, String var, float value) {
        return scalar(b.var(var).dtype(), value);
    }

    static Tensor scalar(DType dtype, float value) {
        return Tensor.scalar(value).to(dtype);
    }
}
