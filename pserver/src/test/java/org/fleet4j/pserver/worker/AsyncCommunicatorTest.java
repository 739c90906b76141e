package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.strategy.AsyncConfigs;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The async and half-async communicator against an in-process server with SGD at learning rate 1 and integer
 * gradients, so every table's total movement counts the gradients that arrived: merging sums them (none lost, none
 * twice), a full queue holds the training thread, half-async's barrier waits for the sends, a sender's failure reaches
 * the training thread naming the server, and closing leaves no thread.
 */
class AsyncCommunicatorTest {
    /** Long enough that no send gives up while a test holds it at the gate. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final Duration SHORT = Duration.ofMillis(300);

    private PsPlan plan;
    private TableShard shard;
    private AsyncCommunicator communicator;
    private PsWorker worker;

    private GatedConnection start(Consumer<AsyncConfigs> configs, boolean gateClosed) {
        plan = PsCompiler.compile(SmallWideDeep.build(100, 4, new SGD(1.0)).main(),
                new DistributedStrategy().mode(Mode.PS).aSyncConfigs(configs), 1, 16);
        shard = plan.shard(0);
        GatedConnection gate = new GatedConnection(new InProcessPsTransport(List.of(shard)).connect("server-0", null),
                gateClosed);
        worker = new PsWorker(plan, List.of(gate), DEADLINE);
        communicator = new AsyncCommunicator(plan, worker, DEADLINE);
        return gate;
    }

    @AfterEach
    void closeAndLeaveNoThread() {
        if (communicator != null) {
            communicator.close();
            worker.close();
        }
        List<String> left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .map(Thread::getName).filter(n -> n.startsWith("ps-async")).toList();
        assertEquals(List.of(), left, "threads of the communicator left after close");
    }

    private float[] denseOnServer(DenseTableConfig t) {
        Tensor out = Tensor.zeros(DType.F32, t.shape());
        shard.pullDense(t.name(), 0, out.segment());
        return out.toFloatArray();
    }

    private static Tensor filled(DenseTableConfig t, float value) {
        Tensor g = Tensor.zeros(DType.F32, t.shape());
        g.fill(value);
        return g;
    }

    @Test
    void queuedGradientsAreSummedUpToMaxMergeAndAFullQueueHoldsTheTrainingStep() throws Exception {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).maxMergeVarNum(4).sendQueueSize(8), true);
        assertEquals(PsMode.ASYNC, plan.mode());
        DenseTableConfig fc = plan.denseTables().getFirst();
        float[] before = denseOnServer(fc);
        communicator.pushDense(fc.name(), filled(fc, 1).segment());
        assertTrue(gate.awaitEntered(), "the sender took the first gradient");
        for (int g = 2; g <= 9; g++) {
            communicator.pushDense(fc.name(), filled(fc, g).segment());
        }
        Thread tenth = Thread.ofPlatform().start(() -> communicator.pushDense(fc.name(), filled(fc, 10).segment()));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (tenth.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertEquals(Thread.State.TIMED_WAITING, tenth.getState(), "the 10th push waits: 1 is being sent, 8 queued");
        assertEquals(10, communicator.pending());
        gate.open();
        tenth.join();
        communicator.flush();
        assertEquals(0, communicator.pending());
        assertEquals(4, gate.densePushes.get(), "1 alone, then the queued ones in sums of max_merge_var_num 4: 2-5, 6-9, 10");
        assertEquals("10 gradient(s) in 4 send(s), 2.50 a send (max_merge_var_num 4)", communicator.traffic());
        float[] after = denseOnServer(fc);
        for (int e = 0; e < after.length; e++) {
            assertEquals(55, Math.round(before[e] - after[e]), "element " + e + " moved by 1 + 2 + ... + 10");
            assertEquals(55, before[e] - after[e], 1e-3, "element " + e);
        }
    }

    @Test
    void queuedSparseRowsAreSummedPerId() throws Exception {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).maxMergeVarNum(8), true);
        SparseTableConfig t = plan.sparseTables().get(1);
        long[][] ids = {{1, 2}, {2, 3}, {3, 4}, {1, 5}};
        for (int k = 0; k < ids.length; k++) {
            Tensor grads = Tensor.zeros(DType.F32, 2, t.dim());
            grads.fill(k + 1);
            communicator.pushSparse(t.name(), Tensor.ofLongs(ids[k], 2).segment(), 2, grads.segment());
            if (k == 0) {
                assertTrue(gate.awaitEntered(), "the sender took the first push");
            }
        }
        gate.open();
        communicator.flush();
        assertEquals(2, gate.sparsePushes.get(), "the first alone, the other three merged into one");
        long[] all = {1, 2, 3, 4, 5};
        int[] moved = {1 + 4, 1 + 2, 2 + 3, 3, 4};
        Tensor rows = Tensor.zeros(DType.F32, all.length, t.dim());
        shard.pullSparse(t.name(), Tensor.ofLongs(all, all.length).segment(), all.length, rows.segment());
        for (int i = 0; i < all.length; i++) {
            for (int j = 0; j < t.dim(); j++) {
                float start = t.initializer().value(all[i], j);
                assertEquals(moved[i], start - rows.getFloat((long) i * t.dim() + j), 1e-4, "id " + all[i] + " column " + j);
            }
        }
    }

    @Test
    void halfAsyncSendBarrierReturnsOnlyOnceTheQueuedSendsWereApplied() throws Exception {
        GatedConnection gate = start(c -> { }, true);
        assertEquals(PsMode.HALF_ASYNC, plan.mode());
        DenseTableConfig fc = plan.denseTables().getFirst();
        float[] before = denseOnServer(fc);
        communicator.pushDense(fc.name(), filled(fc, 2).segment());
        Thread training = Thread.currentThread();
        AtomicBoolean done = new AtomicBoolean();
        Thread opener = Thread.ofPlatform().start(() -> {
            // opens the gate only once the training thread waits in the barrier
            while (!done.get() && training.getState() != Thread.State.TIMED_WAITING
                    && training.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
            gate.open();
        });
        try {
            communicator.sendBarrier();
            float[] after = denseOnServer(fc);
            assertEquals(2, before[0] - after[0], 1e-5, "the step's gradient was applied before the barrier returned");
        } finally {
            done.set(true);
            opener.join();
        }
    }

    @Test
    void asyncPullsReadTheValuesReceivedAfterEachSend() {
        start(c -> c.runtimeSplitSendRecv(true), false);
        DenseTableConfig fc = plan.denseTables().getFirst();
        Tensor first = Tensor.zeros(DType.F32, fc.shape());
        communicator.pullDense(fc.name(), first.segment());
        communicator.pushDense(fc.name(), filled(fc, 3).segment());
        communicator.flush();
        Tensor second = Tensor.zeros(DType.F32, fc.shape());
        communicator.pullDense(fc.name(), second.segment());
        assertEquals(first.getFloat(0) - 3, second.getFloat(0), 1e-5, "received after the send");
        assertEquals(denseOnServer(fc)[0], second.getFloat(0));
    }

    @Test
    void afterCatchUpAnAsyncPullReadsTheServersValueWithAnotherWorkersUpdate() {
        start(c -> c.runtimeSplitSendRecv(true), false);
        DenseTableConfig fc = plan.denseTables().getFirst();
        Tensor value = Tensor.zeros(DType.F32, fc.shape());
        communicator.pullDense(fc.name(), value.segment());
        float start = value.getFloat(0);
        communicator.pushDense(fc.name(), filled(fc, 3).segment());
        communicator.flush();
        // another worker's update, straight to the server
        worker.pushDense(fc.name(), filled(fc, 5).segment());
        communicator.pullDense(fc.name(), value.segment());
        assertEquals(start - 3, value.getFloat(0), 1e-5, "before catching up: the values received after its own send");
        communicator.catchUp();
        communicator.pullDense(fc.name(), value.segment());
        assertEquals(start - 8, value.getFloat(0), 1e-5, "after catching up: the server's value");
        worker.pushDense(fc.name(), filled(fc, 1).segment());
        communicator.pullDense(fc.name(), value.segment());
        assertEquals(start - 8, value.getFloat(0), 1e-5, "and then the received values again until the next send");
    }

    @Test
    void sendWaitTimesKeepsASenderWaitingForMoreGradientsToMerge() throws Exception {
        // up to 1000 waits of 10 ms: the sender holds the first gradient across the gap below and sends one sum
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).maxMergeVarNum(4).sendWaitTimes(1000), false);
        DenseTableConfig fc = plan.denseTables().getFirst();
        float[] before = denseOnServer(fc);
        communicator.pushDense(fc.name(), filled(fc, 1).segment());
        // the gap under test (not a synchronisation): 20 of Paddle's default 10 ms waits, under the 10 s allowed here
        Thread.sleep(200);
        assertEquals(0, gate.densePushes.get(), "the sender still waits for more gradients after 200 ms");
        communicator.pushDense(fc.name(), filled(fc, 2).segment());
        communicator.flush();
        assertEquals(1, gate.densePushes.get(), "1 and 2 merged into one send");
        assertEquals(3, before[0] - denseOnServer(fc)[0], 1e-5);
    }

    @Test
    void oneSendWaitSendsAPartialMergeAfterTenMilliseconds() throws Exception {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).maxMergeVarNum(4).sendWaitTimes(1), false);
        DenseTableConfig fc = plan.denseTables().getFirst();
        communicator.pushDense(fc.name(), filled(fc, 1).segment());
        assertTrue(gate.arrivals.tryAcquire(30, TimeUnit.SECONDS), "the first gradient was sent alone");
        communicator.pushDense(fc.name(), filled(fc, 2).segment());
        communicator.flush();
        assertEquals(2, gate.densePushes.get());
    }

    @Test
    void threadPoolSizeSendersSendAtOnce() throws Exception {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).threadPoolSize(3), true);
        List<DenseTableConfig> dense = plan.denseTables();
        assertEquals(4, dense.size(), "one variable more than senders");
        float[] before = denseOnServer(dense.getLast());
        for (DenseTableConfig t : dense) {
            communicator.pushDense(t.name(), filled(t, 1).segment());
        }
        assertTrue(gate.arrivals.tryAcquire(3, 30, TimeUnit.SECONDS), "3 senders at the closed gate at once");
        assertEquals(3, senderThreads(), "thread_pool_size 3 sender threads");
        assertEquals(0, gate.arrivals.availablePermits(), "the 4th variable waits for a free sender");
        gate.open();
        communicator.flush();
        assertEquals(4, gate.densePushes.get());
        assertEquals(1, before[0] - denseOnServer(dense.getLast())[0], 1e-5, "the 4th variable was sent too");
    }

    private static long senderThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> t.getName().startsWith("ps-async-send")).count();
    }

    @Test
    void anIndependentRecvThreadReceivesEveryDenseTableAndPullsReadWhatItReceived() throws Exception {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true).independentRecvThread(true), false);
        List<DenseTableConfig> dense = plan.denseTables();
        DenseTableConfig fc = dense.getFirst();
        float start = denseOnServer(fc)[0];
        communicator.pushDense(fc.name(), filled(fc, 3).segment());
        communicator.flush();
        // the receive thread pulls every dense table after a send, also the three this worker never sent;
        // a send's own receive (independent_recv_thread false) pulls only the variable it sent
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!gate.densePulls.containsAll(dense.stream().map(DenseTableConfig::name).toList())) {
            assertTrue(System.nanoTime() < until, "the receive thread did not pull every dense table within 30 s: "
                    + gate.densePulls);
            Thread.onSpinWait();
        }
        // once the receive thread stored them, pulls read the received values without a server call
        Tensor read = Tensor.zeros(DType.F32, dense.getLast().shape());
        int pulls;
        do {
            assertTrue(System.nanoTime() < until, "a pull still called the server after 30 s");
            pulls = gate.densePulls.size();
            communicator.pullDense(dense.getLast().name(), read.segment());
        } while (gate.densePulls.size() != pulls);
        assertEquals(denseOnServer(dense.getLast())[0], read.getFloat(0));
        until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Tensor sent = Tensor.zeros(DType.F32, fc.shape());
        do {
            assertTrue(System.nanoTime() < until, "the sent update was not received within 30 s");
            communicator.pullDense(fc.name(), sent.segment());
        } while (Math.abs(start - 3 - sent.getFloat(0)) > 1e-5);
    }

    @Test
    void withoutAnIndependentRecvThreadASendReceivesOnlyItsOwnVariable() {
        GatedConnection gate = start(c -> c.runtimeSplitSendRecv(true), false);
        DenseTableConfig fc = plan.denseTables().getFirst();
        communicator.pushDense(fc.name(), filled(fc, 3).segment());
        communicator.flush();
        assertEquals(List.of(fc.name()), List.copyOf(gate.densePulls), "the send pulled its own variable after it");
        assertEquals(0, Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("ps-async-recv")).count(), "no receive thread");
    }

    @Test
    void aSendersFailureReachesTheTrainingThreadNamingTheServer() {
        plan = PsCompiler.compile(SmallWideDeep.build(100, 4, new SGD(1.0)).main(),
                new DistributedStrategy().mode(Mode.PS).aSyncConfigs(c -> c.runtimeSplitSendRecv(true)
                        .independentRecvThread(true).threadPoolSize(3)), 1, 16);
        shard = plan.shard(0);
        worker = new PsWorker(plan, List.of(new InProcessPsTransport(List.of(shard)).silent(0)), SHORT);
        communicator = new AsyncCommunicator(plan, worker, SHORT);
        DenseTableConfig fc = plan.denseTables().getFirst();
        communicator.pushDense(fc.name(), filled(fc, 1).segment());
        PsException e = assertThrows(PsException.class, communicator::flush);
        String expected = "async send of " + fc.name() + " failed: push_dense of " + fc.name()
                + ": server 0 (server-0) did not answer within 1300 ms";
        assertEquals(expected, e.getMessage());
        PsException next = assertThrows(PsException.class, () -> communicator.pushDense(fc.name(), filled(fc, 1).segment()));
        assertEquals(expected, next.getMessage(), "every later call fails the same way");
    }
}
