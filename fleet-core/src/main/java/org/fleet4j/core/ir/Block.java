package org.fleet4j.core.ir;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.DType;

/** An ordered list of ops over a set of named vars. Appending an op checks it against its spec and infers shapes. */
public final class Block {
    private final Program program;
    private final LinkedHashMap<String, Var> vars = new LinkedHashMap<>();
    private final List<Op> ops = new ArrayList<>();

    Block(Program program) {
        this.program = program;
    }

    public Program program() {
        return program;
    }

    public Var createVar(String name, DType dtype, long... shape) {
        if (vars.containsKey(name)) {
            throw new IrException("var '" + name + "' already exists in this block");
        }
        Var v = new Var(this, name, dtype, shape);
        vars.put(name, v);
        program.touch();
        return v;
    }

    /** A new temporary var with a fresh name ("tmp_7"); its dtype and shape are set by shape inference. */
    public Var createTemp(String prefix) {
        return createVar(program.uniqueName(prefix), DType.F32);
    }

    public boolean hasVar(String name) {
        return vars.containsKey(name);
    }

    public Var var(String name) {
        Var v = vars.get(name);
        if (v == null) {
            throw new IrException("no var named '" + name + "' in the program" + suggestion(name));
        }
        return v;
    }

    public Var findVar(String name) {
        return vars.get(name);
    }

    private String suggestion(String name) {
        String best = null;
        int bestD = Integer.MAX_VALUE;
        for (String n : vars.keySet()) {
            int d = editDistance(name, n);
            if (d < bestD) {
                bestD = d;
                best = n;
            }
        }
        return best != null && bestD <= Math.max(2, name.length() / 3) ? " (did you mean '" + best + "'?)" : "";
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int c = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + c);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    public Collection<Var> vars() {
        return Collections.unmodifiableCollection(vars.values());
    }

    public List<Op> ops() {
        return Collections.unmodifiableList(ops);
    }

    /** Appends an op after checking its slots and attributes against its spec; output vars get inferred shapes. */
    public Op appendOp(String type, Map<String, List<String>> inputs, Map<String, List<String>> outputs,
                       Map<String, Object> attrs) {
        Op op = OpChecker.installed().check(new Op(type, inputs, outputs, attrs), this, ops.size());
        ops.add(op);
        program.touch();
        return op;
    }

    /** Inserts an already-checked op at a position (used by autodiff and compiler passes). */
    public Op insertOp(int index, String type, Map<String, List<String>> inputs, Map<String, List<String>> outputs,
                       Map<String, Object> attrs) {
        Op op = OpChecker.installed().check(new Op(type, inputs, outputs, attrs), this, index);
        ops.add(index, op);
        program.touch();
        return op;
    }

    public void removeOp(int index) {
        ops.remove(index);
        program.touch();
    }

    public void removeVar(String name) {
        vars.remove(name);
        program.touch();
    }

    void copyFrom(Block other) {
        other.vars.forEach((k, v) -> vars.put(k, v.copyTo(this)));
        for (Op op : other.ops) {
            ops.add(new Op(op.type(), op.inputs(), op.outputs(), op.attrs()));
        }
    }

    void addRaw(Var v) {
        vars.put(v.name(), v);
    }

    void addRaw(Op op) {
        ops.add(op);
    }

    boolean sameAs(Block o) {
        if (vars.size() != o.vars.size() || ops.size() != o.ops.size()) {
            return false;
        }
        for (Var v : vars.values()) {
            Var w = o.vars.get(v.name());
            if (w == null || !v.sameAs(w)) {
                return false;
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            if (!ops.get(i).sameAs(o.ops.get(i))) {
                return false;
            }
        }
        return true;
    }
}
