package org.fleet4j.gpu.exec;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.gpu.PinnedHostBuffer;

/**
 * Runs programs on one GPU with the CPU {@code Executor}'s contract. Every var has a device buffer; persistables are
 * uploaded from the scope once and then live on the device, shared by every program this executor runs (main and
 * test programs see the same parameters), and go back to the scope on {@link #syncToScope}, or at once when a run
 * creates one the scope lacks (a startup program). Feeds are copied host to device through pinned buffers, fetches
 * device to host. Each op runs its kernel from {@link GpuKernelTable}: cuBLAS for matmul, the NVRTC-compiled kernels
 * for the rest, or the op's CPU kernel where the table lists a host fallback.
 */
public final class GpuExecutor implements ProgramRunner {
    private final GpuDevice device;
    private final Map<Program, GpuPlan> plans = new IdentityHashMap<>();
    /** The device copy of each persistable, by name. */
    private final Map<String, DeviceTensor> persistent = new HashMap<>();
    /** The scope tensor each device copy was last equal to: a different tensor in the scope means upload again. */
    private final Map<String, Tensor> mirroredFrom = new HashMap<>();
    /** Persistables whose device copy is newer than the scope's. */
    private final Set<String> deviceNewer = new HashSet<>();
    private final Map<String, PinnedHostBuffer> pinned = new HashMap<>();
    private final RingGroups rings;
    private final ExecContext context;

    /** An executor of programs without collective ops, or whose collective ops run on groups attached by hand. */
    public GpuExecutor(GpuDevice device) {
        this(device, ExecContext.none());
    }

    /**
     * An executor whose collective ops reduce through the host groups of {@code context}'s rings unless a group is
     * attached ({@link #attachGroup}).
     */
    public GpuExecutor(GpuDevice device, ExecContext context) {
        this(device, RingGroups.attachedOnly(), context);
    }

    /**
     * An executor whose collective ops run on the groups {@code rings} gives (NCCL over the job's rings, say), the
     * host fallbacks' CPU kernels made with {@code context}.
     */
    GpuExecutor(GpuDevice device, RingGroups rings, ExecContext context) {
        this.device = device;
        this.rings = rings;
        this.context = context;
    }

    @Override
    public GpuDevice device() {
        return device;
    }

    /**
     * Runs {@code c_allreduce} and {@code c_broadcast} ops of ring {@code ringId} on device buffers through
     * {@code group}'s device backend (NCCL) instead of through the host. Plans prepared before are prepared again.
     */
    public void attachGroup(int ringId, ProcessGroup group) {
        rings.attach(ringId, group);
        clearPlans();
    }

    /** Where collective ops of rings without an attached group run: through NCCL or through the host. */
    public RingGroups.Mode collectiveMode() {
        return rings.mode();
    }

    /** Op types that ran through their CPU kernel in the plan of {@code program}; empty before its first run. */
    public Set<String> hostFallbackOps(Program program) {
        GpuPlan plan = plans.get(program);
        return plan == null ? Set.of() : Set.copyOf(plan.hostOps);
    }

    @Override
    public Map<String, Tensor> run(Program program, Scope scope, Map<String, Tensor> feed, List<String> fetch) {
        GpuPlan plan = plans.get(program);
        if (plan == null || plan.isStale() || !plan.groupsCurrent(rings::groupFor)) {
            if (plan != null) {
                plan.clear();
            }
            plan = new GpuPlan(program, device, persistent.values(), rings::groupFor, context);
            plans.put(program, plan);
        }
        Block block = program.globalBlock();
        bindPersistables(plan, scope);
        if (!feed.isEmpty()) {
            device.synchronize(); // the pinned buffers may still be read by the previous run's copies
        }
        for (var e : feed.entrySet()) {
            bindFeed(plan, block, e.getKey(), e.getValue());
        }
        for (String name : plan.readFirst) {
            Var v = block.var(name);
            if (v.isData() ? !feed.containsKey(name) : plan.frame.get(plan.slotOf.get(name)) == null) {
                throw ExecutionException.noValue(v);
            }
        }
        for (String f : fetch) {
            if (!plan.slotOf.containsKey(f)) {
                block.var(f); // throws naming the var, with a suggestion
            }
        }
        runSteps(plan);
        keepPersistables(plan, scope);
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (String f : fetch) {
            DeviceTensor d = plan.frame.get(plan.slotOf.get(f));
            if (d == null) {
                throw new ExecutionException("fetched var '" + f + "' has no value after the run on " + device.name());
            }
            out.put(f, download(d));
        }
        return out;
    }

    private void bindPersistables(GpuPlan plan, Scope scope) {
        for (int s : plan.persistable) {
            String name = plan.names[s];
            DeviceTensor d = persistent.get(name);
            Tensor host = scope.find(name);
            if (host != null && (d == null || mirroredFrom.get(name) != host)) {
                d = upload(d, host);
                persistent.put(name, d);
                mirroredFrom.put(name, host);
                deviceNewer.remove(name);
            }
            plan.frame.set(s, d);
        }
    }

    /** After a run: device copies are kept by name; a persistable the scope lacks (or holds in another shape) goes there now. */
    private void keepPersistables(GpuPlan plan, Scope scope) {
        for (int s : plan.persistable) {
            String name = plan.names[s];
            DeviceTensor d = plan.frame.get(s);
            if (d == null) {
                continue;
            }
            persistent.put(name, d);
            Tensor host = scope.find(name);
            if (host == null || host.dtype() != d.dtype() || !host.hasShape(d.shape())) {
                host = download(d);
                scope.put(name, host);
                mirroredFrom.put(name, host);
                deviceNewer.remove(name);
            } else if (plan.writtenPersistables.contains(name)) {
                deviceNewer.add(name);
            }
        }
    }

    /** The host tensor's bytes in device memory: into {@code into} when it has the same dtype and shape. */
    private DeviceTensor upload(DeviceTensor into, Tensor host) {
        DeviceTensor d = into;
        if (d == null || d.dtype() != host.dtype() || !d.hasShape(host.shape())) {
            if (d != null && d.owned()) {
                device.free(d.buffer());
            }
            d = new DeviceTensor(device.allocate(host.byteSize()), host.dtype(), host.shape(), true);
        }
        if (host.byteSize() > 0) {
            device.copyFromHost(host.segment().asSlice(0, host.byteSize()), d.buffer(), 0);
        }
        return d;
    }

    private Tensor download(DeviceTensor d) {
        Tensor host = Tensor.zeros(d.dtype(), d.shape());
        if (d.byteSize() > 0) {
            device.copyToHost(d.buffer(), 0, host.segment().asSlice(0, d.byteSize()));
        }
        return host;
    }

    private void bindFeed(GpuPlan plan, Block block, String name, Tensor t) {
        ExecutionException.checkFeed(block, name, t);
        long bytes = t.byteSize();
        PinnedHostBuffer p = pinned.get(name);
        if (p == null || p.segment().byteSize() < bytes) {
            if (p != null) {
                p.close();
            }
            p = new PinnedHostBuffer(bytes);
            pinned.put(name, p);
        }
        MemorySegment staging = p.segment().asSlice(0, bytes);
        MemorySegment.copy(t.segment(), 0, staging, 0, bytes);
        DeviceTensor d = plan.frame.output(plan.slotOf.get(name), t.dtype(), t.shape());
        if (bytes > 0) {
            device.copyFromHost(staging, d.buffer(), 0); // asynchronous from pinned memory
        }
    }

    private void runSteps(GpuPlan plan) {
        GpuPlan.Step[] steps = plan.steps;
        for (int i = 0; i < steps.length; i++) {
            GpuPlan.Step step = steps[i];
            if (step.skipTo() >= 0 && !isTrue(plan.frame.get(step.condSlot()), step)) {
                i = step.skipTo();
                continue;
            }
            try {
                step.kernel().run(step.args());
            } catch (ExecutionException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new ExecutionException("op #" + step.index() + " " + step.op() + " failed on " + device.name()
                        + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * A conditional_begin's condition: its first element, read back to the host (one synchronisation: the ops that
     * follow are launched only when it holds, as on the CPU).
     */
    private boolean isTrue(DeviceTensor cond, GpuPlan.Step step) {
        if (cond == null || cond.numel() == 0) {
            throw new ExecutionException("op #" + step.index() + " " + step.op() + ": condition "
                    + step.op().in("Cond") + " has no value on " + device.name());
        }
        Tensor host = Tensor.zeros(cond.dtype(), 1);
        device.copyToHost(cond.buffer(), 0, host.segment().asSlice(0, cond.dtype().byteSize()));
        return host.getDouble(0) != 0;
    }

    @Override
    public void syncToScope(Scope scope) {
        for (String name : deviceNewer) {
            DeviceTensor d = persistent.get(name);
            Tensor host = scope.find(name);
            if (host != null && host.dtype() == d.dtype() && host.hasShape(d.shape())) {
                if (d.byteSize() > 0) {
                    device.copyToHost(d.buffer(), 0, host.segment().asSlice(0, d.byteSize()));
                }
            } else {
                host = download(d);
                scope.put(name, host);
            }
            mirroredFrom.put(name, host);
        }
        deviceNewer.clear();
    }

    @Override
    public void scopeChanged() {
        mirroredFrom.clear();
        deviceNewer.clear();
    }

    private void clearPlans() {
        for (GpuPlan p : plans.values()) {
            p.clear();
        }
        plans.clear();
    }

    @Override
    public void close() {
        device.synchronize();
        clearPlans();
        for (DeviceTensor d : persistent.values()) {
            if (d.owned()) {
                device.free(d.buffer());
            }
        }
        persistent.clear();
        mirroredFrom.clear();
        deviceNewer.clear();
        pinned.values().forEach(PinnedHostBuffer::close);
        pinned.clear();
    }
}
