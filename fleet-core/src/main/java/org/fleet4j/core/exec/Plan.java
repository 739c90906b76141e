package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.DroppedBuffers;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Tensor;

/**
 * A program prepared for repeated runs: every var has a slot in one frame array, every op a kernel and the
 * slot indices of its inputs and outputs. Temporaries stay in the frame between runs, so their buffers are
 * reused rather than reallocated each step.
 */
final class Plan {
    final Program program;
    final long version;
    final Object[] frame;
    final Map<String, Integer> slotOf = new HashMap<>();
    final String[] names;
    final Step[] steps;
    /** Slots of persistable vars, bound to the scope at each run. */
    final int[] persistable;
    /** Vars read before any op writes them: they must come from the feed or the scope. */
    final Set<String> readFirst = new HashSet<>();

    /** Op types the executor interprets itself: ops between a begin and its end run only when Cond is non-zero. */
    static final String CONDITIONAL_BEGIN = ConditionalBlocks.CONDITIONAL_BEGIN;
    static final String CONDITIONAL_END = ConditionalBlocks.CONDITIONAL_END;

    /** The temporaries' buffers that num_iteration_per_drop_scope released, for their next allocation. */
    final DroppedBuffers dropped = new DroppedBuffers();
    /** Slots of temporaries: vars neither persistable nor fed, released by num_iteration_per_drop_scope. */
    final int[] temporaries;
    /** Which steps have run at least once, and how many have not: the parallel executor waits for all to have run. */
    final boolean[] ranOnce;
    int unrun;
    /** Iterations run so far, for num_iteration_per_drop_scope. */
    long iterations;
    /** The dependency graph of the parallel executor, once built; rebuilt when the vars' storage sharing changes. */
    DependencyGraph graph;

    /**
     * {@code skipTo}: for a conditional_begin, the index of its conditional_end; -1 for every other op.
     * {@code reads} and {@code writes}: the frame slots of its inputs and outputs.
     */
    record Step(int index, Op op, Kernel kernel, KernelArgs args, int condSlot, int skipTo, int[] reads, int[] writes) {
    }

    Plan(Program program) {
        this.program = program;
        this.version = program.version();
        Block block = program.globalBlock();
        List<String> all = new ArrayList<>();
        for (Var v : block.vars()) {
            slotOf.put(v.name(), all.size());
            all.add(v.name());
        }
        names = all.toArray(String[]::new);
        frame = new Object[names.length];
        List<Integer> pers = new ArrayList<>();
        for (Var v : block.vars()) {
            if (v.persistable()) {
                pers.add(slotOf.get(v.name()));
            }
        }
        persistable = pers.stream().mapToInt(Integer::intValue).toArray();
        Set<String> kept = new HashSet<>();
        for (Op op : block.ops()) {
            if (OpRegistry.get(op.type()).keepsOutputs()) {
                kept.addAll(op.allOutputs());
            }
        }
        temporaries = block.vars().stream().filter(v -> !v.persistable() && !v.isData() && !kept.contains(v.name()))
                .mapToInt(v -> slotOf.get(v.name())).toArray();
        Set<String> written = new HashSet<>();
        List<Op> ops = block.ops();
        steps = new Step[ops.size()];
        ranOnce = new boolean[ops.size()];
        unrun = ops.size();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            OpSpec spec = OpRegistry.get(op.type());
            for (String in : op.allInputs()) {
                if (!written.contains(in)) {
                    readFirst.add(in);
                }
            }
            written.addAll(op.allOutputs());
            String[] inSlots = spec.inputs().toArray(String[]::new);
            String[] outSlots = spec.outputs().toArray(String[]::new);
            int[][] in = new int[inSlots.length][];
            int[][] out = new int[outSlots.length][];
            for (int s = 0; s < inSlots.length; s++) {
                in[s] = op.input(inSlots[s]).stream().mapToInt(slotOf::get).toArray();
            }
            for (int s = 0; s < outSlots.length; s++) {
                out[s] = op.output(outSlots[s]).stream().mapToInt(slotOf::get).toArray();
            }
            if (spec.kernelFactory() == null) {
                throw new ExecutionException("op #" + i + " " + op.type() + " has no CPU kernel");
            }
            Kernel k = spec.kernelFactory().create(op);
            int cond = op.type().equals(CONDITIONAL_BEGIN) ? slotOf.get(op.in("Cond")) : -1;
            int skip = op.type().equals(CONDITIONAL_BEGIN) ? ConditionalBlocks.matchingEnd(ops, i) : -1;
            steps[i] = new Step(i, op, k, new KernelArgs(op, frame, inSlots, in, outSlots, out, dropped), cond, skip, flat(in),
                    flat(out));
        }
    }

    private static int[] flat(int[][] slots) {
        return Arrays.stream(slots).flatMapToInt(Arrays::stream).toArray();
    }

    boolean isStale() {
        return program.version() != version;
    }

    Tensor tensorAt(String name) {
        Integer s = slotOf.get(name);
        return s == null || !(frame[s] instanceof Tensor t) ? null : t;
    }
}
