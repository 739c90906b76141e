package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_BN_ACT_OPS;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.fused.FusedBnActOp;
import org.fleet4j.core.tensor.DType;

/**
 * {@code fuse_bn_act_ops}: {@code batch_norm} whose output feeds only one {@code relu} becomes one
 * {@code fused_bn_activation}; with backward, {@code relu_grad} + {@code batch_norm_grad} become its grad op. The
 * normalised tensor and its gradient disappear from the program.
 */
public final class FuseBnActPass implements Pass {
    public static final String NAME = "fuse_bn_act_ops";

    @Override
    public String name() {
        return NAME;
    }

    private record Match(int bn, int act, int bnGrad, int actGrad) {
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<Match> matches = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("batch_norm")) {
                Match m = match(block, ops, i, notes);
                if (m != null) {
                    matches.add(m);
                }
            }
        }
        if (matches.isEmpty()) {
            notes.addFirst("nothing fused: no batch_norm followed only by relu");
            return new PassResult(program, notes);
        }
        Op[] replaced = ops.toArray(Op[]::new);
        for (Match m : matches) {
            Op bn = ops.get(m.bn);
            Op act = ops.get(m.act);
            String y = act.out("Out");
            Map<String, List<String>> outs = new LinkedHashMap<>(bn.outputs());
            outs.put("Y", List.of(y));
            Map<String, Object> attrs = new LinkedHashMap<>(bn.attrs());
            attrs.put("act_type", "relu");
            replaced[m.bn] = new Op(FusedBnActOp.TYPE, bn.inputs(), outs, attrs);
            replaced[m.act] = null;
            String desc = "batch_norm(" + bn.in("X") + ") + relu -> " + FusedBnActOp.TYPE + " (" + y + ")";
            if (m.bnGrad >= 0) {
                Op bnGrad = ops.get(m.bnGrad);
                Map<String, List<String>> in = new LinkedHashMap<>(bnGrad.inputs());
                in.put("Y", List.of(y));
                in.put("Y@GRAD", ops.get(m.actGrad).input("Out@GRAD"));
                replaced[m.bnGrad] = new Op(FusedBnActOp.TYPE + "_grad", in, bnGrad.outputs(), attrs);
                replaced[m.actGrad] = null;
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
        Op bn = ops.get(i);
        String t = bn.out("Y");
        if (ProgramEdits.writers(ops, t).size() != 1) {
            return null;
        }
        int act = -1;
        int actGrad = -1;
        int bnGrad = -1;
        for (int r : ProgramEdits.readers(ops, t)) {
            Op op = ops.get(r);
            if (act < 0 && op.type().equals("relu") && r > i) {
                act = r;
            } else if (op.type().equals("batch_norm_grad") && bnGrad < 0 && t.equals(op.in("Y"))) {
                bnGrad = r;
            } else if (act >= 0 && op.type().equals("relu_grad") && actGrad < 0 && t.equals(op.in("X"))) {
                actGrad = r;
            } else {
                return null;
            }
        }
        if (act < 0) {
            return null;
        }
        String pair = "batch_norm -> relu at op #" + i;
        if (block.var(bn.in("X")).dtype() != DType.F32) {
            notes.add("not fused " + pair + ": only float32 has a fused kernel");
            return null;
        }
        if ((bnGrad < 0) != (actGrad < 0)) {
            notes.add("not fused " + pair + ": only one of the two grad ops is in the program");
            return null;
        }
        if (actGrad >= 0) {
            String gt = ops.get(actGrad).out("X@GRAD");
            if (gt == null || !gt.equals(ops.get(bnGrad).in("Y@GRAD")) || ProgramEdits.readers(ops, gt).size() != 1
                    || actGrad > bnGrad) {
                notes.add("not fused " + pair + ": the gradient of " + t + " is used beyond the pair");
                return null;
            }
        }
        return new Match(i, act, bnGrad, actGrad);
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 210, List.of(any(BUILD_FUSE_BN_ACT_OPS)),
                    c -> c.knob(BUILD_FUSE_BN_ACT_OPS), c -> new FuseBnActPass());
        }
    }
}
