package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ELEWISE_ADD_ACT_OPS;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.fused.FusedElewiseAddActOp;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;

/**
 * {@code fuse_elewise_add_act_ops}: {@code elementwise_add} whose result feeds only one relu, sigmoid, tanh or scale
 * becomes one {@code fused_elemwise_add_activation}; when backward ran, the activation's grad and the add's grad
 * become its one grad op. The intermediate sum and its gradient disappear from the program.
 */
public final class FuseElewiseAddActPass implements Pass {
    public static final String NAME = "fuse_elewise_add_act_ops";
    private static final Set<String> ACTS = Set.of("relu", "sigmoid", "tanh", "scale");

    @Override
    public String name() {
        return NAME;
    }

    /** One fusable pair: indices of the add, the activation, and (when present) their grads, -1 otherwise. */
    private record Match(int add, int act, int addGrad, int actGrad) {
    }

    @Override
    public PassResult apply(Program program) {
        List<Op> ops = program.globalBlock().ops();
        List<Match> matches = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("elementwise_add")) {
                Match m = match(program.globalBlock(), ops, i, notes);
                if (m != null) {
                    matches.add(m);
                }
            }
        }
        if (matches.isEmpty()) {
            notes.add(0, "nothing fused: no elementwise_add followed only by relu, sigmoid, tanh or scale");
            return new PassResult(program, notes);
        }
        Op[] replaced = ops.toArray(Op[]::new);
        for (Match m : matches) {
            Op add = ops.get(m.add);
            Op act = ops.get(m.act);
            Map<String, Object> attrs = fusedAttrs(act);
            replaced[m.add] = new Op(FusedElewiseAddActOp.TYPE, add.inputs(), Map.of("Out", act.output("Out")), attrs);
            replaced[m.act] = null;
            String desc = "elementwise_add(" + add.in("X") + ", " + add.in("Y") + ") + " + act.type() + " -> "
                    + FusedElewiseAddActOp.TYPE + " (" + act.out("Out") + ")";
            if (m.addGrad >= 0) {
                Op addGrad = ops.get(m.addGrad);
                Map<String, List<String>> in = new LinkedHashMap<>();
                in.put("X", add.input("X"));
                in.put("Y", add.input("Y"));
                in.put("Out", act.output("Out"));
                in.put("Out@GRAD", ops.get(m.actGrad).input("Out@GRAD"));
                replaced[m.addGrad] = new Op(FusedElewiseAddActOp.TYPE + "_grad", in, addGrad.outputs(), attrs);
                replaced[m.actGrad] = null;
                desc += ", with its grad pair";
            }
            notes.add("fused " + desc);
        }
        Program out = ProgramEdits.copyWithOps(program, replaced);
        List<String> removed = ProgramEdits.removeUnusedTemps(out.globalBlock());
        notes.add(0, matches.size() + " pair(s) fused; intermediates no longer stored: " + removed);
        return new PassResult(out, notes);
    }

    private static Map<String, Object> fusedAttrs(Op act) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("functor", act.type());
        if (act.type().equals("scale")) {
            attrs.put("scale", act.floatAttr("scale"));
            attrs.put("bias", act.floatAttr("bias"));
            attrs.put("bias_after_scale", act.boolAttr("bias_after_scale"));
        }
        return attrs;
    }

    /** The pair starting at the add at index {@code i}, or null (with a note when it nearly matched). */
    private static Match match(Block block, List<Op> ops, int i, List<String> notes) {
        Op add = ops.get(i);
        String t = add.out("Out");
        Var tv = block.var(t);
        if (tv.persistable() || ProgramEdits.writers(ops, t).size() != 1) {
            return null;
        }
        int act = -1;
        int actGrad = -1;
        int addGrad = -1;
        for (int r : ProgramEdits.readers(ops, t)) {
            Op op = ops.get(r);
            if (act < 0 && ACTS.contains(op.type()) && r > i) {
                act = r;
            } else if (op.type().equals("elementwise_add_grad") && addGrad < 0 && t.equals(op.in("Out"))) {
                addGrad = r;
            } else if (act >= 0 && op.type().equals(ops.get(act).type() + "_grad") && actGrad < 0
                    && t.equals(op.in("X"))) {
                actGrad = r;
            } else {
                return null;
            }
        }
        if (act < 0) {
            return null;
        }
        Var x = block.var(add.in("X"));
        Var y = block.var(add.in("Y"));
        String pair = "elementwise_add -> " + ops.get(act).type() + " at op #" + i;
        if (x.dtype() != DType.F32 || y.dtype() != DType.F32) {
            notes.add("not fused " + pair + ": only float32 has a fused kernel");
            return null;
        }
        int axis = add.intAttr("axis");
        if (!FusedElewiseAddActOp.rowBroadcastable(x.shape(), y.shape())
                || axis != -1 && axis != x.shape().length - y.shape().length) {
            notes.add("not fused " + pair + ": Y " + Shapes.str(y.shape()) + " is neither X's shape "
                    + Shapes.str(x.shape()) + " nor its trailing dimensions");
            return null;
        }
        if ((addGrad < 0) != (actGrad < 0)) {
            notes.add("not fused " + pair + ": only one of the two grad ops is in the program");
            return null;
        }
        if (actGrad >= 0) {
            String gt = ops.get(actGrad).out("X@GRAD");
            if (gt == null || !gt.equals(ops.get(addGrad).in("Out@GRAD"))
                    || ProgramEdits.readers(ops, gt).size() != 1 || ProgramEdits.writers(ops, gt).size() != 1
                    || actGrad > addGrad) {
                notes.add("not fused " + pair + ": the gradient of " + t + " is used beyond the pair");
                return null;
            }
        }
        return new Match(i, act, addGrad, actGrad);
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 200, List.of(any(BUILD_FUSE_ELEWISE_ADD_ACT_OPS)),
                    c -> c.knob(BUILD_FUSE_ELEWISE_ADD_ACT_OPS), c -> new FuseElewiseAddActPass());
        }
    }
}
