package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;

/** The edits passes share: copying a program whole, finding readers and writers of a var, rebuilding a block. */
final class ProgramEdits {
    private ProgramEdits() {
    }

    /** A copy that keeps the startup program (Program.copy does not), so passes stay pure. */
    static Program copyOf(Program p) {
        Program c = p.copy();
        c.setStartupProgram(p.startupProgram());
        return c;
    }

    /** Indices of the ops that read {@code var}. */
    static List<Integer> readers(List<Op> ops, String var) {
        List<Integer> r = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).allInputs().contains(var)) {
                r.add(i);
            }
        }
        return r;
    }

    /** Indices of the ops that write {@code var}. */
    static List<Integer> writers(List<Op> ops, String var) {
        List<Integer> w = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).allOutputs().contains(var)) {
                w.add(i);
            }
        }
        return w;
    }

    /**
     * A copy of {@code program} (as {@link #copyOf}) whose global block holds the ops of {@code ops} that are not null,
     * in order: a pass's rewrite, with null for each op it removed.
     */
    static Program copyWithOps(Program program, Op[] ops) {
        Program out = copyOf(program);
        List<Op> kept = new ArrayList<>();
        for (Op op : ops) {
            if (op != null) {
                kept.add(op);
            }
        }
        replaceOps(out.globalBlock(), kept);
        return out;
    }

    /** Replaces every op of the block by {@code ops} (each checked again against its spec). */
    static void replaceOps(Block block, List<Op> ops) {
        for (int i = block.ops().size() - 1; i >= 0; i--) {
            block.removeOp(i);
        }
        for (Op op : ops) {
            block.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
        }
    }

    /** Removes temporaries (not persistable, not data) that no op reads or writes any more. */
    static List<String> removeUnusedTemps(Block block) {
        Set<String> used = new HashSet<>();
        for (Op op : block.ops()) {
            used.addAll(op.allInputs());
            used.addAll(op.allOutputs());
        }
        List<String> removed = new ArrayList<>();
        for (Var v : new ArrayList<>(block.vars())) {
            if (!v.persistable() && !v.isData() && !used.contains(v.name())) {
                block.removeVar(v.name());
                removed.add(v.name());
            }
        }
        return removed;
    }

    /** Makes {@code target} hold exactly the vars and ops of {@code source} (same object, new contents). */
    static void replaceContents(Program target, Program source) {
        Block t = target.globalBlock();
        Block s = source.globalBlock();
        for (int i = t.ops().size() - 1; i >= 0; i--) {
            t.removeOp(i);
        }
        for (Var v : new ArrayList<>(t.vars())) {
            if (!s.hasVar(v.name())) {
                t.removeVar(v.name());
            }
        }
        for (Var v : s.vars()) {
            Var w = t.hasVar(v.name()) ? t.var(v.name()) : t.createVar(v.name(), v.dtype(), v.shape());
            w.setDtype(v.dtype()).setShape(v.shape()).setKind(v.kind()).setPersistable(v.persistable())
                    .setParameter(v.isParameter()).setStopGradient(v.stopGradient()).setData(v.isData());
        }
        for (Op op : s.ops()) {
            t.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
        }
    }
}
