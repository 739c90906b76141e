package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_ENABLE_INPLACE;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;

/**
 * {@code enable_inplace}: when an op's input is a temporary that nothing reads afterwards, the op writes its output
 * over it. The input var is renamed to the output's name (its producer writes there, the op then updates it in
 * place), so one buffer serves both and the output keeps the name users fetch. Only ops whose kernels read element i
 * before writing element i, and only same-shape, same-dtype pairs, qualify.
 */
public final class InplacePass implements Pass {
    public static final String NAME = "enable_inplace";

    /** Op type -> {input slot, output slot} that may share a buffer. */
    private static final Map<String, String[]> SAFE = Map.ofEntries(
            Map.entry("relu", new String[]{"X", "Out"}),
            Map.entry("sigmoid", new String[]{"X", "Out"}),
            Map.entry("tanh", new String[]{"X", "Out"}),
            Map.entry("gelu", new String[]{"X", "Out"}),
            Map.entry("scale", new String[]{"X", "Out"}),
            Map.entry("elementwise_add", new String[]{"X", "Out"}),
            Map.entry("elementwise_sub", new String[]{"X", "Out"}),
            Map.entry("elementwise_mul", new String[]{"X", "Out"}),
            Map.entry("elementwise_div", new String[]{"X", "Out"}),
            Map.entry("relu_grad", new String[]{"Out@GRAD", "X@GRAD"}),
            Map.entry("sigmoid_grad", new String[]{"Out@GRAD", "X@GRAD"}),
            Map.entry("tanh_grad", new String[]{"Out@GRAD", "X@GRAD"}),
            Map.entry("gelu_grad", new String[]{"Out@GRAD", "X@GRAD"}),
            Map.entry("scale_grad", new String[]{"Out@GRAD", "X@GRAD"}));

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Program result = ProgramEdits.copyOf(program);
        Block block = result.globalBlock();
        List<String> notes = new ArrayList<>();
        List<Op> ops = new ArrayList<>(block.ops());
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            String[] pair = SAFE.get(op.type());
            if (pair == null || op.in(pair[0]) == null || op.out(pair[1]) == null) {
                continue;
            }
            String in = op.in(pair[0]);
            String out = op.out(pair[1]);
            if (in.equals(out) || !reusable(block, ops, i, in, out)) {
                continue;
            }
            for (Op o : ops) {
                o.renameVar(in, out);
            }
            notes.add("op #" + i + " " + op.type() + " writes " + out + " over its input " + in);
        }
        if (notes.isEmpty()) {
            return PassResult.unchanged(program, "nothing reused: no op's input dies at that op with its output's shape");
        }
        ProgramEdits.replaceOps(block, ops);
        ProgramEdits.removeUnusedTemps(block);
        notes.addFirst(notes.size() + " output(s) now share their input's buffer");
        return new PassResult(result, notes);
    }

    /**
     * {@code in} is a temporary whose writers all come before op #i and which nothing reads after its last write but
     * op #i (earlier readers are in-place ops of a chain already merged); {@code out} matches it and only op #i
     * writes it.
     */
    private static boolean reusable(Block block, List<Op> ops, int i, String in, String out) {
        Var vi = block.var(in);
        Var vo = block.var(out);
        if (vi.persistable() || vi.isData() || vo.persistable() || vo.isData() || vi.dtype() != vo.dtype()
                || !Arrays.equals(vi.shape(), vo.shape())) {
            return false;
        }
        List<Integer> inWriters = ProgramEdits.writers(ops, in);
        if (inWriters.isEmpty() || inWriters.getLast() >= i) {
            return false;
        }
        int lastWrite = inWriters.getLast();
        List<Integer> lateReaders = ProgramEdits.readers(ops, in).stream().filter(r -> r > lastWrite).toList();
        return lateReaders.equals(List.of(i)) && ProgramEdits.writers(ops, out).equals(List.of(i))
                && ProgramEdits.readers(ops, out).stream().allMatch(r -> r > i);
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 800, List.of(any(BUILD_ENABLE_INPLACE)),
                    c -> c.knob(BUILD_ENABLE_INPLACE), c -> new InplacePass());
        }
    }
}
