package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * Each server optimizer against the worker's optimizer op on the same gradients: a [ROWS, DIM] parameter trained by
 * the op in one process, and the same parameter as a sparse table (row i = id i) and as a dense table cut into blocks,
 * both over two servers. Same arithmetic in the same order, so values and slots must be bit-equal, key for key.
 */
class ServerOptimizerTest {
    private static final int ROWS = 7;
    private static final int DIM = 5;
    private static final int STEPS = 6;
    private static final RowInitializer INIT = RowInitializer.uniform(-0.5f, 0.5f, 42);

    private record Case(Optimizer worker, ServerOptimizer server, String slotVar) {
    }

    private static List<Case> cases() {
        return List.of(
                new Case(new SGD(LrSchedule.constant(0.1), 0.01f), new ServerOptimizer.Sgd(0.1f, 0.01f), null),
                new Case(new Momentum(LrSchedule.constant(0.1), 0.9f, false, 0f), new ServerOptimizer.Momentum(0.1f, 0.9f), "w_velocity_0"),
                new Case(new Momentum(LrSchedule.constant(0.1), 0.9f, true, 0.01f),
                        new ServerOptimizer.Momentum(0.1f, 0.9f, true, 0.01f), "w_velocity_0"),
                new Case(new Adagrad(0.05), new ServerOptimizer.Adagrad(0.05f), "w_moment_0"),
                new Case(new Adagrad(LrSchedule.constant(0.05), 1e-6f, 0.1f),
                        new ServerOptimizer.Adagrad(0.05f, 1e-6f, 0.1f), "w_moment_0"),
                new Case(new Adam(0.05), new ServerOptimizer.Adam(0.05f), "w_moment2_0"));
    }

    private static float[] grads(int step) {
        Random r = new Random(1000 + step);
        float[] g = new float[ROWS * DIM];
        for (int i = 0; i < g.length; i++) {
            g[i] = (float) r.nextGaussian();
        }
        return g;
    }

    /**
     * The worker: the optimizer's op applied to a fed gradient, from the initializer's values as the sparse table
     * creates them (row i = id i) or as the dense table does (element e of the flattened parameter).
     */
    private static Scope trainOnWorker(Optimizer opt, boolean sparseLayout) {
        Program main = new Program();
        Layers nn = new Layers(main, new Program());
        nn.createParameter("w", DType.F32, new long[]{ROWS, DIM}, Initializer.constant(0f));
        nn.data("g", DType.F32, ROWS, DIM);
        opt.applyGradients(main, List.of(new ParamGrad("w", "g")));
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(nn.startup(), scope);
        for (int i = 0; i < ROWS; i++) {
            for (int j = 0; j < DIM; j++) {
                scope.get("w").setFloat((long) i * DIM + j, sparseLayout ? INIT.value(i, j) : INIT.value(0, (long) i * DIM + j));
            }
        }
        for (int s = 0; s < STEPS; s++) {
            exe.run(main, scope, Map.of("g", Tensor.of(grads(s), ROWS, DIM)), List.of());
        }
        return scope;
    }

    @Test
    void sparseRowsMatchTheWorkerOpKeyForKey() {
        for (Case c : cases()) {
            Scope worker = trainOnWorker(c.worker(), true);
            List<TableShard> servers = new ArrayList<>();
            for (int s = 0; s < 2; s++) {
                servers.add(new TableShard(s, 2, List.of(), List.of(new SparseTableConfig("emb", DIM, c.server(), INIT))));
            }
            for (int step = 0; step < STEPS; step++) {
                float[] g = grads(step);
                for (int id = 0; id < ROWS; id++) {
                    float[] row = Arrays.copyOfRange(g, id * DIM, (id + 1) * DIM);
                    servers.get(KeyHash.serverOf(id, 2)).pushSparse("emb", Rows.ids(id), 1, Rows.floats(row));
                }
            }
            float[] w = worker.get("w").toFloatArray();
            float[] slot = c.slotVar() == null ? null : worker.get(c.slotVar()).toFloatArray();
            for (int id = 0; id < ROWS; id++) {
                float[] rec = servers.get(KeyHash.serverOf(id, 2)).sparseTable("emb").peekRecord(id);
                String what = c.server() + ", id " + id;
                assertArrayEquals(Arrays.copyOfRange(w, id * DIM, (id + 1) * DIM),
                        Arrays.copyOfRange(rec, 0, DIM), what + " value");
                if (slot != null) {
                    int k = c.server().slots().size();
                    assertArrayEquals(Arrays.copyOfRange(slot, id * DIM, (id + 1) * DIM),
                            Arrays.copyOfRange(rec, k * DIM, (k + 1) * DIM), what + " " + c.slotVar());
                }
            }
        }
    }

    @Test
    void denseBlocksMatchTheWorkerOp() {
        for (Case c : cases()) {
            Scope worker = trainOnWorker(c.worker(), false);
            DenseTableConfig param = new DenseTableConfig("w", new long[]{ROWS, DIM}, c.server(), INIT);
            // a minimum block of 10 elements cuts the 35-element parameter into two blocks of whole rows
            List<TableShard> servers = List.of(new TableShard(0, 2, List.of(param), List.of(), 10),
                    new TableShard(1, 2, List.of(param), List.of(), 10));
            List<DenseSlicing.Block> plan = DenseSlicing.planTables(List.of(param), 2, 10);
            for (int step = 0; step < STEPS; step++) {
                MemorySegment g = Tensor.of(grads(step), ROWS * DIM).segment();
                for (DenseSlicing.Block b : plan) {
                    servers.get(b.server()).pushDense("w", b.block(), g.asSlice(b.offset() * 4, b.numel() * 4));
                }
            }
            float[] pulled = new float[ROWS * DIM];
            for (DenseSlicing.Block b : plan) {
                MemorySegment out = Rows.zeros(b.numel());
                servers.get(b.server()).pullDense("w", b.block(), out);
                System.arraycopy(Rows.toArray(out), 0, pulled, (int) b.offset(), (int) b.numel());
            }
            assertArrayEquals(worker.get("w").toFloatArray(), pulled, c.server() + " dense value");
        }
    }
}
