package org.fleet4j.core.exec;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.DroppedBuffers;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.tensor.Tensor;

/**
 * A program prepared for repeated runs on the CPU: laid out by {@link PlanLayout}, every var has a slot in one frame
 * array, every op the kernel of its spec and the slot indices of its inputs and outputs. Temporaries stay in the frame between runs, so their buffers are
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

    Plan(Program program, ExecContext context) {
        PlanLayout layout = new PlanLayout(program);
        this.program = program;
        this.version = layout.version();
        slotOf.putAll(layout.slotOf());
        names = layout.names();
        frame = new Object[names.length];
        persistable = layout.persistable();
        readFirst.addAll(layout.readFirst());
        Block block = program.globalBlock();
        Set<String> kept = new HashSet<>();
        for (PlanLayout.OpSlots op : layout.ops()) {
            if (op.spec().keepsOutputs()) {
                kept.addAll(op.op().allOutputs());
            }
        }
        temporaries = block.vars().stream().filter(v -> !v.persistable() && !v.isData() && !kept.contains(v.name()))
                .mapToInt(v -> slotOf.get(v.name())).toArray();
        List<Kernel> kernels = layout.kernels(op -> cpuKernel(op, context));
        steps = new Step[kernels.size()];
        ranOnce = new boolean[steps.length];
        unrun = steps.length;
        for (PlanLayout.OpSlots o : layout.ops()) {
            steps[o.index()] = new Step(o.index(), o.op(), kernels.get(o.index()),
                    new KernelArgs(o.op(), frame, o.inSlots(), o.in(), o.outSlots(), o.out(), dropped), o.condSlot(),
                    o.skipTo(), flat(o.in()), flat(o.out()));
        }
    }

    /** The CPU's kernel resolver: the kernel of the op's registered spec, made with the job's context; failures name the op. */
    static Kernel cpuKernel(PlanLayout.OpSlots o, ExecContext context) {
        if (o.spec().kernelFactory() == null) {
            throw new ExecutionException("op #" + o.index() + " " + o.op().type() + " has no CPU kernel");
        }
        try {
            return o.spec().kernelFactory().create(o.op(), context);
        } catch (ExecutionException named) {
            throw named;
        } catch (RuntimeException e) {
            // a ring the context lacks, a root outside its ring: named with the op, as a failure of its kernel is
            throw new ExecutionException("op #" + o.index() + " " + o.op() + " failed: " + e.getMessage(), e);
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
