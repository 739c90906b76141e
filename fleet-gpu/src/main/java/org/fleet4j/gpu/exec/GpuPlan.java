package org.fleet4j.gpu.exec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.core.exec.ConditionalBlocks;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.gpu.GpuDevice;

/**
 * A program prepared for repeated runs on one GPU: every var has a slot in a frame of device values, every op a GPU
 * kernel (or its listed host fallback) and the slots of its inputs and outputs. Temporaries stay in the frame between
 * runs, so their device buffers are reused.
 */
final class GpuPlan {
    final Program program;
    final long version;
    final DeviceFrame frame;
    final Map<String, Integer> slotOf = new HashMap<>();
    final String[] names;
    final Step[] steps;
    /** Slots of persistable vars, bound to the executor's device copies at each run. */
    final int[] persistable;
    /** Persistable vars that some op writes: after a run the device holds newer values than the scope. */
    final Set<String> writtenPersistables = new LinkedHashSet<>();
    /** Vars read before any op writes them: they must come from the feed or the scope. */
    final Set<String> readFirst = new HashSet<>();
    /** The device group (null: the host path) of each ring the plan's collective ops use. */
    private final Map<Integer, ProcessGroup> groupOfRing = new HashMap<>();
    /** Op types that run through their CPU kernel in this plan, for the log. */
    final Set<String> hostOps = new LinkedHashSet<>();

    static final String ALLREDUCE = "c_allreduce";
    /** The overlap pass's asynchronous allreduce; on the GPU it completes before the next op, and c_wait does nothing. */
    static final String ALLREDUCE_START = "c_allreduce_start";
    static final String CONDITIONAL_BEGIN = ConditionalBlocks.CONDITIONAL_BEGIN;
    static final String CONDITIONAL_END = ConditionalBlocks.CONDITIONAL_END;

    /**
     * {@code skipTo}: for a conditional_begin, the index of its conditional_end, where the run goes on when the
     * condition (slot {@code condSlot}) is false; -1 for every other op.
     */
    record Step(int index, Op op, GpuOpKernel kernel, GpuOpArgs args, int skipTo, int condSlot) {
    }

    /** {@code deviceGroups}: the NCCL group attached to a ring id, or null where collectives go through the host. */
    GpuPlan(Program program, GpuDevice device, Collection<DeviceTensor> shared, IntFunction<ProcessGroup> deviceGroups) {
        this.program = program;
        this.version = program.version();
        Block block = program.globalBlock();
        List<String> all = new ArrayList<>();
        for (Var v : block.vars()) {
            slotOf.put(v.name(), all.size());
            all.add(v.name());
        }
        names = all.toArray(String[]::new);
        frame = new DeviceFrame(device, names.length, shared);
        Object[] hostFrame = new Object[names.length];
        persistable = block.vars().stream().filter(Var::persistable).mapToInt(v -> slotOf.get(v.name())).toArray();
        Set<String> written = new HashSet<>();
        List<Op> ops = block.ops();
        steps = new Step[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
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
            int[][] in = new int[inSlots.length][];
            int[][] out = new int[outSlots.length][];
            for (int s = 0; s < inSlots.length; s++) {
                in[s] = op.input(inSlots[s]).stream().mapToInt(slotOf::get).toArray();
            }
            for (int s = 0; s < outSlots.length; s++) {
                out[s] = op.output(outSlots[s]).stream().mapToInt(slotOf::get).toArray();
            }
            GpuOpKernel kernel = deviceCollective(op, deviceGroups);
            if (kernel == null) {
                kernel = GpuKernelTable.kernelFor(op, i);
            }
            if (kernel == null) {
                kernel = hostFallback(op, i, hostFrame);
                hostOps.add(op.type());
            }
            boolean begin = op.type().equals(CONDITIONAL_BEGIN);
            steps[i] = new Step(i, op, kernel, new GpuOpArgs(op, frame, inSlots, in, outSlots, out),
                    begin ? ConditionalBlocks.matchingEnd(ops, i) : -1, begin ? slotOf.get(op.in("Cond")) : -1);
        }
    }

    /**
     * The op's CPU kernel on host copies of its values. An overlapped allreduce without a device group runs as the
     * synchronous {@code c_allreduce} through the host group: the CPU's asynchronous start would keep reducing a host
     * copy after the fallback had copied it back, and its Work handle has no device value.
     */
    private HostFallback hostFallback(Op op, int index, Object[] hostFrame) {
        Op host = op.type().equals(ALLREDUCE_START) ? new Op(ALLREDUCE, Map.of("X", op.input("X")),
                Map.of("Out", op.output("Out")), Map.of("ring_id", op.intAttr("ring_id"), "reduce", op.stringAttr("reduce")))
                : op;
        OpSpec spec = OpRegistry.get(host.type());
        if (spec.kernelFactory() == null) {
            throw GpuKernelTable.missing(op, index);
        }
        String[] inSlots = spec.inputs().toArray(String[]::new);
        String[] outSlots = spec.outputs().toArray(String[]::new);
        int[][] in = slots(host, inSlots, true);
        int[][] out = slots(host, outSlots, false);
        return new HostFallback(spec.kernelFactory().create(host), new KernelArgs(host, hostFrame, inSlots, in, outSlots, out),
                hostFrame, frame, distinct(in), distinct(out));
    }

    private int[][] slots(Op op, String[] slotNames, boolean inputs) {
        int[][] idx = new int[slotNames.length][];
        for (int s = 0; s < slotNames.length; s++) {
            idx[s] = (inputs ? op.input(slotNames[s]) : op.output(slotNames[s])).stream().mapToInt(slotOf::get).toArray();
        }
        return idx;
    }

    private GpuOpKernel deviceCollective(Op op, IntFunction<ProcessGroup> deviceGroups) {
        if (!op.type().equals(ALLREDUCE) && !op.type().equals(ALLREDUCE_START) && !op.type().equals("c_broadcast")) {
            return null;
        }
        int ring = op.intAttr("ring_id");
        ProcessGroup group = deviceGroups.apply(ring);
        groupOfRing.put(ring, group);
        return group == null ? null : DeviceCollective.of(op, group);
    }

    /** Whether every ring this plan's collectives use still has the group (or the host path) it was prepared with. */
    boolean groupsCurrent(IntFunction<ProcessGroup> deviceGroups) {
        for (var e : groupOfRing.entrySet()) {
            if (deviceGroups.apply(e.getKey()) != e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static int[] distinct(int[][] slots) {
        Set<Integer> s = new LinkedHashSet<>();
        for (int[] row : slots) {
            for (int v : row) {
                s.add(v);
            }
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Frees the plan's temporaries and its kernels' scratch memory. */
    void clear() {
        frame.clear();
        for (Step s : steps) {
            s.kernel().release(frame.device());
        }
    }

    boolean isStale() {
        return program.version() != version;
    }
}
