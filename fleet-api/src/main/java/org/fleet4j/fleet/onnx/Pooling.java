package org.fleet4j.fleet.onnx;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;

/**
 * pool2d in ONNX: max or average windows as MaxPool or AveragePool (paddings never pooled: ONNX's own rule for max,
 * count_include_pad 0 for an exclusive average), global pooling as GlobalMaxPool or GlobalAveragePool, and adaptive
 * pooling as the global form for a 1 x 1 output or as equal windows (kernel = stride = input / output) where the
 * output size divides the input's, which is what adaptive pooling then computes.
 */
final class Pooling {
    private Pooling() {
    }

    /** Why this pool2d has no ONNX form here, or null when it has one. */
    static String unsupported(Op op, Block b) {
        long[] x = b.var(op.in("X")).shape();
        if (op.boolAttr("adaptive")) {
            int[] out = op.attr("ksize");
            boolean global = out[0] == 1 && out[1] == 1;
            if (!global && (x.length != 4 || x[2] < 1 || x[3] < 1 || x[2] % out[0] != 0 || x[3] % out[1] != 0)) {
                return "is adaptive pooling to " + out[0] + "x" + out[1] + " of an input " + Arrays.toString(x)
                        + " whose height and width are not known multiples of it, whose windows ONNX's fixed"
                        + " windows cannot make; pool to 1x1 or to a divisor of the input size";
            }
        }
        return null;
    }

    static void convert(OnnxGraph g, Block b, Op op) {
        boolean max = op.stringAttr("pooling_type").equals("max");
        String x = g.value(op.in("X"));
        String out = g.define(op.out("Out"));
        long[] shape = b.var(op.in("X")).shape();
        int[] ksize = op.attr("ksize");
        boolean adaptive = op.boolAttr("adaptive");
        if (op.boolAttr("global_pooling") || (adaptive && ksize[0] == 1 && ksize[1] == 1)) {
            g.node(max ? "GlobalMaxPool" : "GlobalAveragePool", List.of(x), List.of(out), Map.of());
            return;
        }
        Map<String, Object> attrs = new LinkedHashMap<>();
        if (adaptive) {
            long[] window = {shape[2] / ksize[0], shape[3] / ksize[1]};
            attrs.put("kernel_shape", window);
            attrs.put("strides", window);
        } else {
            attrs.put("kernel_shape", OnnxExporter.longs(ksize));
            attrs.put("strides", OnnxExporter.longs(op.attr("strides")));
            switch (op.stringAttr("padding_algorithm")) {
                case "SAME" -> attrs.put("auto_pad", "SAME_UPPER");
                case "VALID" -> attrs.put("pads", new long[4]);
                default -> attrs.put("pads", OnnxExporter.onnxPads(op.attr("paddings")));
            }
            attrs.put("ceil_mode", op.boolAttr("ceil_mode") ? 1L : 0L);
            if (!max) {
                attrs.put("count_include_pad", op.boolAttr("exclusive") ? 0L : 1L);
            }
        }
        g.node(max ? "MaxPool" : "AveragePool", List.of(x), List.of(out), attrs);
    }
}
