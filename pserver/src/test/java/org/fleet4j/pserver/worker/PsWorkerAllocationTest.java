package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;

/**
 * In its steady state a worker's sparse pull and push over several servers allocate a few small objects per call
 * (the calls' threads and futures), not buffers that grow with the batch: the routing buffers are reused. Measured
 * as the bytes the calling thread allocates ({@code ThreadMXBean.getThreadAllocatedBytes}), which include the heap
 * side of every off-heap segment the call would make.
 */
class PsWorkerAllocationTest {
    private static final int SERVERS = 3;
    private static final int IDS = 4096;
    private static final int WARM = 300;
    private static final int CALLS = 200;
    /** Bytes per call allowed: a few virtual threads and futures; routing 4,096 ids anew costs over 32 KB. */
    private static final long BOUND = 4096;

    @Test
    void steadyStateSparseCallsAllocateNoBuffers() {
        Program main = SmallWideDeep.build(100, 4, new SGD(0.01)).main();
        PsPlan plan = PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSync(true), SERVERS, 16);
        List<TableShard> shards = new ArrayList<>();
        for (int i = 0; i < SERVERS; i++) {
            shards.add(plan.shard(i));
        }
        InProcessPsTransport transport = new InProcessPsTransport(shards);
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(30), null);
        List<PsConnection> connections = new ArrayList<>();
        for (int i = 0; i < SERVERS; i++) {
            connections.add(transport.connect("server-" + i, options));
        }
        SparseTableConfig table = plan.sparseTables().get(1);
        long[] idValues = new long[IDS];
        for (int i = 0; i < IDS; i++) {
            idValues[i] = i * 7919L;
        }
        Tensor ids = Tensor.ofLongs(idValues, IDS);
        Tensor rows = Tensor.zeros(DType.F32, IDS, table.dim());
        Tensor grads = Tensor.zeros(DType.F32, IDS, table.dim());
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        try (PsWorker worker = new PsWorker(plan, connections, options.deadline())) {
            for (int i = 0; i < WARM; i++) {
                worker.pullSparse(table.name(), ids.segment(), IDS, rows.segment());
                worker.pushSparse(table.name(), ids.segment(), IDS, grads.segment());
            }
            long before = threads.getThreadAllocatedBytes(self);
            for (int i = 0; i < CALLS; i++) {
                worker.pullSparse(table.name(), ids.segment(), IDS, rows.segment());
                worker.pushSparse(table.name(), ids.segment(), IDS, grads.segment());
            }
            double perCall = (threads.getThreadAllocatedBytes(self) - before) / (2.0 * CALLS);
            System.out.printf("steady-state sparse call over %d servers, %d ids: %.0f bytes allocated per call%n",
                    SERVERS, IDS, perCall);
            assertTrue(perCall < BOUND, perCall + " bytes allocated per call, bound " + BOUND);
        }
    }
}
