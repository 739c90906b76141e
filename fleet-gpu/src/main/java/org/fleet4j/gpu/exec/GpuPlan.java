package org.fleet4j.gpu.exec;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.core.exec.PlanLayout;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.gpu.GpuDevice;

/**
 * A program prepared for repeated runs on one GPU: laid out by {@link PlanLayout}, every var has a slot in a frame of
 * device values, every op a GPU kernel (or its listed host fallback) and the slots of its inputs and outputs. The GPU's
 * kernel resolver tries, in order: the ring's device group for an allreduce or broadcast, {@link GpuKernelTable}, and
 * the op's CPU kernel on host copies where the table lists a host fallback. Temporaries stay in the frame between
 * runs, so their device buffers are reused.
 */
final class GpuPlan {
    final Program program;
    final long version;
    final DeviceFrame frame;
    final Map<String, Integer> slotOf;
    final String[] names;
    final Step[] steps;
    /** Slots of persistable vars, bound to the executor's device copies at each run. */
    final int[] persistable;
    /** Persistable vars that some op writes: after a run the device holds newer values than the scope. */
    final Set<String> writtenPersistables;
    /** Vars read before any op writes them: they must come from the feed or the scope. */
    final Set<String> readFirst;
    /** The device group (null: the host path) of each ring the plan's collective ops use. */
    private final Map<Integer, ProcessGroup> groupOfRing = new HashMap<>();
    /** Op types that run through their CPU kernel in this plan, for the log. */
    final Set<String> hostOps = new LinkedHashSet<>();
    private final PlanLayout layout;
    private final Object[] hostFrame;
    private final ExecContext context;

    /**
     * {@code skipTo}: for a conditional_begin, the index of its conditional_end, where the run goes on when the
     * condition (slot {@code condSlot}) is false; -1 for every other op.
     */
    record Step(int index, Op op, GpuOpKernel kernel, GpuOpArgs args, int skipTo, int condSlot) {
    }

    /**
     * {@code deviceGroups}: the NCCL group attached to a ring id, or null where collectives go through the host;
     * {@code context}: the job's, with which host fallbacks make their CPU kernels.
     */
    GpuPlan(Program program, GpuDevice device, Collection<DeviceTensor> shared, IntFunction<ProcessGroup> deviceGroups,
            ExecContext context) {
        this.layout = new PlanLayout(program);
        this.program = program;
        this.version = layout.version();
        this.slotOf = layout.slotOf();
        this.names = layout.names();
        this.persistable = layout.persistable();
        this.writtenPersistables = layout.writtenPersistables();
        this.readFirst = layout.readFirst();
        this.context = context;
        frame = new DeviceFrame(device, names.length, shared);
        hostFrame = new Object[names.length];
        List<GpuOpKernel> kernels = layout.kernels(o -> gpuKernel(o, deviceGroups));
        steps = new Step[kernels.size()];
        for (PlanLayout.OpSlots o : layout.ops()) {
            steps[o.index()] = new Step(o.index(), o.op(), kernels.get(o.index()),
                    new GpuOpArgs(o.op(), frame, o.inSlots(), o.in(), o.outSlots(), o.out()), o.skipTo(), o.condSlot());
        }
    }

    /** The GPU's kernel resolver: the ring's device group, else the kernel table, else the listed host fallback. */
    private GpuOpKernel gpuKernel(PlanLayout.OpSlots o, IntFunction<ProcessGroup> deviceGroups) {
        GpuOpKernel kernel = deviceCollective(o.op(), deviceGroups);
        if (kernel == null) {
            kernel = GpuKernelTable.kernelFor(o.op(), o.index());
        }
        if (kernel == null) {
            kernel = hostFallback(o.op(), o.index());
            hostOps.add(o.op().type());
        }
        return kernel;
    }

    /**
     * The op's CPU kernel on host copies of its values. An overlapped allreduce without a device group runs as the
     * synchronous {@code c_allreduce} through the host group: the CPU's asynchronous start would keep reducing a host
     * copy after the fallback had copied it back, and its Work handle has no device value.
     */
    private HostFallback hostFallback(Op op, int index) {
        Op host = op.type().equals(CollectiveOpTypes.ALLREDUCE_START) ? new Op(CollectiveOpTypes.ALLREDUCE,
                Map.of("X", op.input("X")), Map.of("Out", op.output("Out")),
                Map.of(CollectiveOpTypes.RING_ID, CollectiveOpTypes.ringId(op),
                        CollectiveOpTypes.REDUCE_ATTR, op.stringAttr(CollectiveOpTypes.REDUCE_ATTR)))
                : op;
        OpSpec spec = OpRegistry.get(host.type());
        if (spec.kernelFactory() == null) {
            throw GpuKernelTable.missing(op, index);
        }
        String[] inSlots = spec.inputs().toArray(String[]::new);
        String[] outSlots = spec.outputs().toArray(String[]::new);
        int[][] in = layout.slots(host, inSlots, true);
        int[][] out = layout.slots(host, outSlots, false);
        return new HostFallback(spec.kernelFactory().create(host, context),
                new KernelArgs(host, hostFrame, inSlots, in, outSlots, out), hostFrame, frame, distinct(in), distinct(out));
    }

    private GpuOpKernel deviceCollective(Op op, IntFunction<ProcessGroup> deviceGroups) {
        if (!CollectiveOpTypes.DEVICE_COLLECTIVES.contains(op.type())) {
            return null;
        }
        int ring = CollectiveOpTypes.ringId(op);
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
