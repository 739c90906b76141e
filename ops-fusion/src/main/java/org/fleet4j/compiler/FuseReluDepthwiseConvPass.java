package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_RELU_DEPTHWISE_CONV;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ConvOps;
import org.fleet4j.core.ops.fused.FusedReluDepthwiseConvOp;
import org.fleet4j.core.tensor.DType;

/**
 * {@code fuse_relu_depthwise_conv}: a {@code relu} whose output only a {@code depthwise_conv2d} reads becomes part of
 * that convolution, one {@code fused_relu_depthwise_conv} (Paddle's fuse_relu_depthwise_conv_pass); with backward,
 * {@code depthwise_conv2d_grad} + {@code relu_grad} become its grad op. The relu's output and its gradient disappear
 * from the program. It runs before fuse_bn_act_ops, so where batch_norm - relu - depthwise_conv2d would match both,
 * the relu goes into the convolution.
 */
public final class FuseReluDepthwiseConvPass implements Pass {
    public static final String NAME = "fuse_relu_depthwise_conv";
    private static final String CONV = ConvOps.DEPTHWISE_CONV2D;

    @Override
    public String name() {
        return NAME;
    }

    /** Op indices of one fusable pair; the grad ops are -1 when absent. */
    private record Match(int relu, int conv, int convGrad, int reluGrad) {
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<Match> matches = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("relu")) {
                Match m = match(block, ops, i, notes);
                if (m != null) {
                    matches.add(m);
                }
            }
        }
        if (matches.isEmpty()) {
            notes.addFirst("nothing fused: no relu read only by a depthwise_conv2d");
            return new PassResult(program, notes);
        }
        Op[] replaced = ops.toArray(Op[]::new);
        for (Match m : matches) {
            Op relu = ops.get(m.relu);
            Op conv = ops.get(m.conv);
            String x = relu.in("X");
            Map<String, List<String>> in = new LinkedHashMap<>(conv.inputs());
            in.put("Input", List.of(x));
            replaced[m.conv] = new Op(FusedReluDepthwiseConvOp.TYPE, in, conv.outputs(), conv.attrs());
            replaced[m.relu] = null;
            String desc = "relu(" + x + ") + " + CONV + " -> " + FusedReluDepthwiseConvOp.TYPE + " (" + conv.out("Output") + ")";
            if (m.convGrad >= 0) {
                Op convGrad = ops.get(m.convGrad);
                Map<String, List<String>> gin = new LinkedHashMap<>(convGrad.inputs());
                gin.put("Input", List.of(x));
                Map<String, List<String>> gout = new LinkedHashMap<>();
                if (!convGrad.output("Filter@GRAD").isEmpty()) {
                    gout.put("Filter@GRAD", convGrad.output("Filter@GRAD"));
                }
                if (m.reluGrad >= 0) {
                    gout.put("Input@GRAD", ops.get(m.reluGrad).output("X@GRAD"));
                    replaced[m.reluGrad] = null;
                }
                replaced[m.convGrad] = new Op(FusedReluDepthwiseConvOp.TYPE + "_grad", gin, gout, convGrad.attrs());
                desc += ", with its grad pair";
            }
            notes.add("fused " + desc);
        }
        Program out = ProgramEdits.copyWithOps(program, replaced);
        List<String> removed = ProgramEdits.removeUnusedTemps(out.globalBlock());
        notes.addFirst(matches.size() + " pair(s) fused; intermediates no longer stored: " + removed);
        return new PassResult(out, notes);
    }

    private static Match match(Block block, List<Op> ops, int i, List<String> notes) {
        Op relu = ops.get(i);
        String r = relu.out("Out");
        if (ProgramEdits.writers(ops, r).size() != 1) {
            return null;
        }
        int conv = -1;
        int convGrad = -1;
        int reluGrad = -1;
        for (int at : ProgramEdits.readers(ops, r)) {
            Op op = ops.get(at);
            if (conv < 0 && op.type().equals(CONV) && at > i && r.equals(op.in("Input"))) {
                conv = at;
            } else if (convGrad < 0 && op.type().equals(CONV + "_grad") && r.equals(op.in("Input"))) {
                convGrad = at;
            } else if (reluGrad < 0 && op.type().equals("relu_grad") && r.equals(op.in("Out"))) {
                reluGrad = at;
            } else {
                return null;
            }
        }
        if (conv < 0) {
            return null;
        }
        String pair = "relu -> " + CONV + " at op #" + i;
        if (block.var(relu.in("X")).dtype() != DType.F32) {
            notes.add("not fused " + pair + ": only float32 has a fused kernel");
            return null;
        }
        List<String> dr = convGrad < 0 ? List.of() : ops.get(convGrad).output("Input@GRAD");
        if (dr.isEmpty() != (reluGrad < 0)) {
            notes.add("not fused " + pair + ": only one of the two grad ops is in the program");
            return null;
        }
        if (reluGrad >= 0) {
            String g = dr.getFirst();
            if (!g.equals(ops.get(reluGrad).in("Out@GRAD")) || ProgramEdits.writers(ops, g).size() != 1
                    || ProgramEdits.readers(ops, g).size() != 1 || reluGrad < convGrad) {
                notes.add("not fused " + pair + ": the gradient of " + r + " is used beyond the pair");
                return null;
            }
        }
        return new Match(i, conv, convGrad, reluGrad);
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 205, List.of(any(BUILD_FUSE_RELU_DEPTHWISE_CONV)),
                    c -> c.knob(BUILD_FUSE_RELU_DEPTHWISE_CONV), c -> new FuseReluDepthwiseConvPass());
        }
    }
}
