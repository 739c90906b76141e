package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;

/**
 * How a program is laid out for repeated runs on any device: every var has a slot in one frame, every op the slots of
 * its inputs and outputs in its spec's slot order, and a conditional_begin the slot of its condition and the index of
 * its end. Each device's plan builds its frame of that many slots and asks its {@link KernelResolver} for the kernel
 * of each op (the CPU: the op registry; the GPU: its kernel table and host fallbacks).
 */
public final class PlanLayout {
    /** The kernel of one op on one device, made once when a plan is prepared. */
    @FunctionalInterface
    public interface KernelResolver<K> {
        K resolve(OpSlots op);
    }

    /**
     * One op with its spec and frame slots: {@code in[s]} are the slots of the vars in input slot {@code inSlots[s]}.
     * {@code condSlot} and {@code skipTo}: for a conditional_begin, the slot of Cond and the index of its
     * conditional_end; -1 for every other op.
     */
    public record OpSlots(int index, Op op, OpSpec spec, String[] inSlots, int[][] in, String[] outSlots, int[][] out,
                          int condSlot, int skipTo) {
        public boolean conditionalBegin() {
            return skipTo >= 0;
        }
    }

    private final Program program;
    private final long version;
    private final Map<String, Integer> slotOf = new HashMap<>();
    private final String[] names;
    private final int[] persistable;
    private final Set<String> readFirst = new HashSet<>();
    private final Set<String> writtenPersistables = new LinkedHashSet<>();
    private final List<OpSlots> ops = new ArrayList<>();

    public PlanLayout(Program program) {
        this.program = program;
        this.version = program.version();
        Block block = program.globalBlock();
        List<String> all = new ArrayList<>();
        for (Var v : block.vars()) {
            slotOf.put(v.name(), all.size());
            all.add(v.name());
        }
        names = all.toArray(String[]::new);
        persistable = block.vars().stream().filter(Var::persistable).mapToInt(v -> slotOf.get(v.name())).toArray();
        Set<String> written = new HashSet<>();
        List<Op> list = block.ops();
        for (int i = 0; i < list.size(); i++) {
            Op op = list.get(i);
            OpSpec spec = OpRegistry.get(op.type());
            for (String in : op.allInputs()) {
                if (!written.contains(in)) {
                    readFirst.add(in);
                }
            }
            written.addAll(op.allOutputs());
            for (String out : op.allOutputs()) {
                if (block.var(out).persistable()) {
                    writtenPersistables.add(out);
                }
            }
            String[] inSlots = spec.inputs().toArray(String[]::new);
            String[] outSlots = spec.outputs().toArray(String[]::new);
            boolean begin = op.type().equals(ConditionalBlocks.CONDITIONAL_BEGIN);
            ops.add(new OpSlots(i, op, spec, inSlots, slots(op, inSlots, true), outSlots, slots(op, outSlots, false),
                    begin ? slotOf.get(op.in("Cond")) : -1, begin ? ConditionalBlocks.matchingEnd(list, i) : -1));
        }
    }

    /** The frame slots of {@code op}'s vars in each of {@code slotNames}, inputs or outputs. */
    public int[][] slots(Op op, String[] slotNames, boolean inputs) {
        int[][] idx = new int[slotNames.length][];
        for (int s = 0; s < slotNames.length; s++) {
            idx[s] = (inputs ? op.input(slotNames[s]) : op.output(slotNames[s])).stream().mapToInt(slotOf::get).toArray();
        }
        return idx;
    }

    /** The kernel of every op, in program order, from {@code resolver}. */
    public <K> List<K> kernels(KernelResolver<K> resolver) {
        List<K> kernels = new ArrayList<>(ops.size());
        for (OpSlots op : ops) {
            kernels.add(resolver.resolve(op));
        }
        return kernels;
    }

    public Program program() {
        return program;
    }

    /** The program's version when it was laid out: a later version means the layout is stale. */
    public long version() {
        return version;
    }

    public Map<String, Integer> slotOf() {
        return Collections.unmodifiableMap(slotOf);
    }

    /** The var of each slot. */
    public String[] names() {
        return names.clone();
    }

    /** Slots of persistable vars, bound to the scope (or the device's copies) at each run. */
    public int[] persistable() {
        return persistable.clone();
    }

    /** Vars read before any op writes them: they must come from the feed or the scope. */
    public Set<String> readFirst() {
        return Collections.unmodifiableSet(readFirst);
    }

    /** Persistable vars that some op writes, in program order. */
    public Set<String> writtenPersistables() {
        return Collections.unmodifiableSet(writtenPersistables);
    }

    public List<OpSlots> ops() {
        return Collections.unmodifiableList(ops);
    }
}
