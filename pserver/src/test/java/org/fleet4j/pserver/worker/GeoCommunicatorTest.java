package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Geo mode against an in-process server whose tables add deltas, with SGD at learning rate 1 on the workers and
 * integer gradients: nothing reaches the server between exchanges; an exchange pushes the local training's delta
 * (divided by the workers), a worker catches up with what the others pushed, and a row is fetched again in each window.
 */
class GeoCommunicatorTest {
    private static final Duration DEADLINE = Duration.ofMillis(300);

    private final List<AutoCloseable> opened = new ArrayList<>();
    private PsPlan plan;
    private TableShard shard;

    private void plan(int kSteps) {
        plan = PsCompiler.compile(SmallWideDeep.build(100, 4, new SGD(1.0)).main(),
                new DistributedStrategy().mode(Mode.PS).aSyncConfigs(c -> c.kSteps(kSteps).threadPoolSize(2)), 1, 16);
        assertEquals(PsMode.GEO, plan.mode());
        shard = plan.shard(0);
    }

    private GeoCommunicator worker(int index, int workers) {
        PsWorker w = new PsWorker(plan, List.of(new InProcessPsTransport(List.of(shard)).connect("server-0", null)),
                DEADLINE, index, workers);
        GeoCommunicator geo = new GeoCommunicator(plan, w, DEADLINE, workers);
        opened.add(w);
        opened.add(geo);
        return geo;
    }

    @AfterEach
    void closeAndLeaveNoThread() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        List<String> left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .map(Thread::getName).filter(n -> n.startsWith("ps-geo")).toList();
        assertEquals(List.of(), left, "threads of the communicator left after close");
    }

    private float denseOnServer(DenseTableConfig t) {
        Tensor out = Tensor.zeros(DType.F32, t.shape());
        shard.pullDense(t.name(), 0, out.segment());
        return out.getFloat(0);
    }

    private float rowOnServer(SparseTableConfig t, long id) {
        Tensor out = Tensor.zeros(DType.F32, 1, t.dim());
        shard.pullSparse(t.name(), Tensor.ofLongs(new long[]{id}, 1).segment(), 1, out.segment());
        return out.getFloat(0);
    }

    private static void trainDense(GeoCommunicator geo, DenseTableConfig t, float grad) {
        Tensor value = Tensor.zeros(DType.F32, t.shape());
        geo.pullDense(t.name(), value.segment());
        Tensor g = Tensor.zeros(DType.F32, t.shape());
        g.fill(grad);
        geo.pushDense(t.name(), g.segment());
    }

    private static float trainRow(GeoCommunicator geo, SparseTableConfig t, long id, float grad) {
        Tensor ids = Tensor.ofLongs(new long[]{id}, 1);
        Tensor row = Tensor.zeros(DType.F32, 1, t.dim());
        geo.pullSparse(t.name(), ids.segment(), 1, row.segment());
        Tensor g = Tensor.zeros(DType.F32, 1, t.dim());
        g.fill(grad);
        geo.pushSparse(t.name(), ids.segment(), 1, g.segment());
        return row.getFloat(0);
    }

    /** Two workers of a plan with {@code kSteps}, its first dense table and a sparse table, and their start values. */
    private record TwoWorkers(GeoCommunicator a, GeoCommunicator b, DenseTableConfig fc, SparseTableConfig emb,
                              float denseStart, float rowStart) {
    }

    private TwoWorkers twoWorkers(int kSteps) {
        plan(kSteps);
        DenseTableConfig fc = plan.denseTables().getFirst();
        SparseTableConfig emb = plan.sparseTables().get(1);
        return new TwoWorkers(worker(0, 2), worker(1, 2), fc, emb, denseOnServer(fc), emb.initializer().value(7, 0));
    }

    @Test
    void oneWorkerPushesItsLocalTrainingDeltaEveryKSteps() {
        plan(3);
        GeoCommunicator geo = worker(0, 1);
        DenseTableConfig fc = plan.denseTables().getFirst();
        SparseTableConfig emb = plan.sparseTables().get(1);
        float denseStart = denseOnServer(fc);
        float rowStart = emb.initializer().value(7, 0);
        for (int step = 1; step <= 3; step++) {
            trainDense(geo, fc, step);
            trainRow(geo, emb, 7, step);
            if (step < 3) {
                geo.sendBarrier();
                assertEquals(denseStart, denseOnServer(fc), "nothing reaches the server between exchanges");
            }
        }
        assertEquals(1, shard.sparseTable(emb.name()).keys(), "the one row the worker fetched");
        geo.sendBarrier();
        assertEquals(0, geo.stepsSinceExchange());
        assertEquals(denseStart - 6, denseOnServer(fc), 1e-5, "the server moved by the local training: 1 + 2 + 3");
        assertEquals(rowStart - 6, rowOnServer(emb, 7), 1e-5);
        Tensor local = Tensor.zeros(DType.F32, fc.shape());
        geo.pullDense(fc.name(), local.segment());
        assertEquals(denseOnServer(fc), local.getFloat(0), 1e-5, "one worker's copy equals the server after an exchange");
    }

    @Test
    void twoWorkersPushHalfTheirProgressAndARowIsFetchedAgainInTheNextWindow() {
        TwoWorkers two = twoWorkers(1);
        GeoCommunicator a = two.a();
        GeoCommunicator b = two.b();
        DenseTableConfig fc = two.fc();
        SparseTableConfig emb = two.emb();
        float denseStart = two.denseStart();
        float rowStart = two.rowStart();

        trainDense(a, fc, 2);
        trainRow(a, emb, 7, 2);
        a.sendBarrier();
        assertEquals(denseStart - 1, denseOnServer(fc), 1e-5, "a's delta -2 divided by 2 workers");
        assertEquals(rowStart - 1, rowOnServer(emb, 7), 1e-5);

        assertEquals(rowStart - 1, trainRow(b, emb, 7, 4), 1e-5, "b fetches the row a pushed");
        trainDense(b, fc, 4);
        b.sendBarrier();
        assertEquals(denseStart - 3, denseOnServer(fc), 1e-5, "b's delta -4 divided by 2 workers");
        assertEquals(rowStart - 3, rowOnServer(emb, 7), 1e-5);

        float row9 = emb.initializer().value(9, 0);
        assertEquals(row9, pullRow(a, emb, 9), 1e-6);
        trainRow(b, emb, 9, 4);
        b.sendBarrier();
        assertEquals(row9 - 2, rowOnServer(emb, 9), 1e-5);
        assertEquals(row9, pullRow(a, emb, 9), 1e-6, "within a window a reads its copy");
        a.sendBarrier();
        assertEquals(row9 - 2, pullRow(a, emb, 9), 1e-5, "a's next window fetches the row again and sees b's push");
    }

    private static float pullRow(GeoCommunicator geo, SparseTableConfig t, long id) {
        Tensor row = Tensor.zeros(DType.F32, 1, t.dim());
        geo.pullSparse(t.name(), Tensor.ofLongs(new long[]{id}, 1).segment(), 1, row.segment());
        return row.getFloat(0);
    }

    @Test
    void thousandsOfRowsGrowTheLocalCopy() {
        plan(2);
        GeoCommunicator geo = worker(0, 1);
        SparseTableConfig emb = plan.sparseTables().get(1);
        int n = 5000;
        long[] ids = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = 1_000_003L * i;
        }
        Tensor rows = Tensor.zeros(DType.F32, n, emb.dim());
        geo.pullSparse(emb.name(), Tensor.ofLongs(ids, n).segment(), n, rows.segment());
        Tensor grads = Tensor.zeros(DType.F32, n, emb.dim());
        grads.fill(1);
        geo.pushSparse(emb.name(), Tensor.ofLongs(ids, n).segment(), n, grads.segment());
        geo.pullSparse(emb.name(), Tensor.ofLongs(ids, n).segment(), n, rows.segment());
        for (int i = 0; i < n; i++) {
            assertEquals(emb.initializer().value(ids[i], 0) - 1, rows.getFloat((long) i * emb.dim()), 1e-5, "id " + ids[i]);
        }
        geo.flush();
        assertEquals(emb.initializer().value(ids[n - 1], 0) - 1, rowOnServer(emb, ids[n - 1]), 1e-5);
    }

    @Test
    void afterEveryWorkerFlushedCatchUpReadsTheServersValues() {
        TwoWorkers t = twoWorkers(100);
        trainDense(t.a(), t.fc(), 2);
        trainRow(t.a(), t.emb(), 7, 2);
        trainDense(t.b(), t.fc(), 6);
        trainRow(t.b(), t.emb(), 7, 6);
        t.a().flush();
        t.b().flush(); // the barrier: both flushed, the server moved by (2 + 6) / 2
        assertEquals(t.denseStart() - 4, denseOnServer(t.fc()), 1e-5);
        Tensor local = Tensor.zeros(DType.F32, t.fc().shape());
        t.a().pullDense(t.fc().name(), local.segment());
        assertEquals(t.denseStart() - 2, local.getFloat(0), 1e-5, "before catching up a reads its copy: its own -2"
                + " whole, none of b's");
        t.a().catchUp();
        t.a().pullDense(t.fc().name(), local.segment());
        assertEquals(t.denseStart() - 4, local.getFloat(0), 1e-5, "after catching up: the server's value, b's update in it");
        assertEquals(t.rowStart() - 4, pullRow(t.a(), t.emb(), 7), 1e-5, "a sparse row is fetched again after catching up");
        trainDense(t.a(), t.fc(), 2);
        t.a().flush();
        assertEquals(t.denseStart() - 5, denseOnServer(t.fc()), 1e-5, "later deltas count from the caught-up value");
        t.b().catchUp();
        assertEquals(t.rowStart() - 4, pullRow(t.b(), t.emb(), 7), 1e-5, "b's row: the server's, its own unsent -3 dropped");
    }

    @Test
    void flushPushesAPartialWindow() {
        plan(5);
        GeoCommunicator geo = worker(0, 1);
        DenseTableConfig fc = plan.denseTables().getFirst();
        float start = denseOnServer(fc);
        trainDense(geo, fc, 3);
        geo.sendBarrier();
        geo.flush();
        assertEquals(start - 3, denseOnServer(fc), 1e-5);
        assertEquals(0, geo.stepsSinceExchange());
    }
}
