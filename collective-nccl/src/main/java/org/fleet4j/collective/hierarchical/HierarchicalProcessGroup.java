package org.fleet4j.collective.hierarchical;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.OpCall;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.collective.reduce.Reductions;

/**
 * Allreduce for ranks spread over several hosts with several ranks each: reduce inside each host over shared
 * memory, allreduce among one leader per host over TCP, broadcast inside each host over shared memory. So only
 * one rank per host puts the data on the network. The other operations run on a flat TCP group of all ranks.
 */
final class HierarchicalProcessGroup extends AbstractProcessGroup {
    private final ProcessGroup local;
    private final ProcessGroup leaders;
    private final ProcessGroup flat;

    private HierarchicalProcessGroup(GroupContext ctx, ProcessGroup local, ProcessGroup leaders, ProcessGroup flat) {
        super(ctx);
        this.local = local;
        this.leaders = leaders;
        this.flat = flat;
    }

    static HierarchicalProcessGroup open(GroupContext ctx) {
        String myHost = ctx.hostKeys()[ctx.rank()];
        List<Integer> sameHost = new ArrayList<>();
        List<Integer> leaderRanks = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < ctx.size(); i++) {
            if (ctx.hostKeys()[i].equals(myHost)) {
                sameHost.add(i);
            }
            if (!seen.contains(ctx.hostKeys()[i])) {
                seen.add(ctx.hostKeys()[i]);
                leaderRanks.add(i);
            }
        }
        List<AbstractProcessGroup> opened = new ArrayList<>();
        try {
            AbstractProcessGroup local = ProcessGroups.create(part(ctx, "local-" + myHost, sameHost, Backend.SHM));
            opened.add(local);
            AbstractProcessGroup leaders = null;
            if (leaderRanks.contains(ctx.rank())) {
                leaders = ProcessGroups.create(part(ctx, "leaders", leaderRanks, Backend.TCP));
                opened.add(leaders);
            }
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < ctx.size(); i++) {
                all.add(i);
            }
            AbstractProcessGroup flat = ProcessGroups.create(part(ctx, "flat", all, Backend.TCP));
            opened.add(flat);
            return new HierarchicalProcessGroup(ctx, local, leaders, flat);
        } catch (RuntimeException e) {
            opened.forEach(ProcessGroup::close);
            throw e;
        }
    }

    private static GroupContext part(GroupContext ctx, String suffix, List<Integer> members, Backend backend) {
        int[] global = new int[members.size()];
        String[] hosts = new String[members.size()];
        for (int i = 0; i < members.size(); i++) {
            global[i] = ctx.globalRanks()[members.get(i)];
            hosts[i] = ctx.hostKeys()[members.get(i)];
        }
        return new GroupContext(ctx.jobId(), ctx.name() + "/" + suffix, members.indexOf(ctx.rank()), global, hosts,
                ctx.store(), ctx.jobToken(), ctx.bindHost(), ctx.options().withBackend(backend));
    }

    @Override
    public Backend backend() {
        return Backend.HIERARCHICAL;
    }

    @Override
    protected void runAllreduce(OpCall call, MemorySegment buffer) {
        ReduceOp partial = call.op() == ReduceOp.AVG ? ReduceOp.SUM : call.op();
        local.reduce(buffer, call.dtype(), partial, 0).await(ctx.options().timeout());
        if (leaders != null) {
            leaders.allreduce(buffer, call.dtype(), partial).await(ctx.options().timeout());
            if (call.op() == ReduceOp.AVG) {
                Reductions.divide(buffer, 0, call.count(), call.dtype(), size());
            }
        }
        local.broadcast(buffer, call.dtype(), 0).await(ctx.options().timeout());
    }

    @Override
    protected void runBroadcast(OpCall call, MemorySegment buffer) {
        flat.broadcast(buffer, call.dtype(), call.root()).await(ctx.options().timeout());
    }

    @Override
    protected void runReduce(OpCall call, MemorySegment buffer) {
        flat.reduce(buffer, call.dtype(), call.op(), call.root()).await(ctx.options().timeout());
    }

    @Override
    protected void runAllgather(OpCall call, MemorySegment send, MemorySegment recv) {
        flat.allgather(send, recv, call.dtype()).await(ctx.options().timeout());
    }

    @Override
    protected void runReduceScatter(OpCall call, MemorySegment send, MemorySegment recv) {
        flat.reduceScatter(send, recv, call.dtype(), call.op()).await(ctx.options().timeout());
    }

    @Override
    protected void runBarrier(OpCall call) {
        flat.barrier().await(ctx.options().timeout());
    }

    @Override
    protected void runSend(OpCall call, MemorySegment buffer, int dst) {
        flat.send(buffer, call.dtype(), dst).await(ctx.options().timeout());
    }

    @Override
    protected void runRecv(OpCall call, MemorySegment buffer, int src) {
        flat.recv(buffer, call.dtype(), src).await(ctx.options().timeout());
    }

    @Override
    protected void abort(CollectiveException reason) {
        release();
    }

    @Override
    protected void release() {
        local.close();
        if (leaders != null) {
            leaders.close();
        }
        flat.close();
    }
}
