package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsOpTypes;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sync mode, SGD, one worker: the transpiled program against S in-process servers trains exactly as the untranspiled
 * program in one process (loss of every step, every parameter), within the float32 noise of that training, measured
 * as fleet-core's drift tests do (the reference against itself started one ulp away).
 */
class PsTrainingEquivalenceTest {
    private static final long VOCAB = 40;
    private static final int DIM = 4;
    private static final int STEPS = 25;
    private static final int BATCH = 16;

    @ParameterizedTest(name = "{0} server(s)")
    @ValueSource(ints = {1, 2})
    void syncSgdEqualsTheSingleProcessRun(int servers) {
        SmallWideDeep net = SmallWideDeep.build(VOCAB, DIM, new SGD(0.2));
        // Small blocks, so that with 2 servers the dense parameters are really cut and spread.
        PsPlan plan = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false), servers, 16);

        TrainingRecord reference = local(net, plan, 0);
        TrainingDrift noise = TrainingDrift.between(reference, local(net, plan, 1));
        TrainingRecord ps = parameterServer(net, plan);
        TrainingDrift drift = TrainingDrift.between(reference, ps);
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), drift.summaryAgainst(noise));
    }

    /**
     * tensor_fuse: one pull_fused and one push_fused per step instead of a pull and a push per table, and the same
     * training to the bit (losses and every parameter), since each server applies the same gradients.
     */
    @ParameterizedTest(name = "{0} server(s)")
    @ValueSource(ints = {1, 2})
    void fusedTrainsBitForBitAsUnfused(int servers) {
        SmallWideDeep net = SmallWideDeep.build(VOCAB, DIM, new SGD(0.2));
        DistributedStrategy strategy = new DistributedStrategy().mode(Mode.PS).aSync(false);
        PsPlan unfused = PsCompiler.compile(net.main(), strategy, servers, 16);
        PsPlan fused = PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false).tensorFuse(true),
                servers, 16);
        assertEquals(List.of(PsOpTypes.PULL_FUSED, PsOpTypes.PUSH_FUSED), fused.workerMain().globalBlock().ops().stream()
                .map(op -> op.type()).filter(t -> t.startsWith("pull_") || t.startsWith("push_")).toList());

        TrainingRecord a = parameterServer(net, unfused);
        TrainingRecord b = parameterServer(net, fused);
        assertArrayEquals(a.losses(), b.losses(), "loss of every step");
        assertEquals(a.parameters().keySet(), b.parameters().keySet());
        a.parameters().forEach((name, values) -> assertArrayEquals(values, b.parameters().get(name), name));
    }

    /** The untranspiled program, its parameters set to the values the servers start the tables with. */
    private static TrainingRecord local(SmallWideDeep net, PsPlan plan, int ulps) {
        try (Executor exe = new Executor()) {
            Scope scope = new Scope();
            exe.run(net.startup(), scope);
            for (DenseTableConfig t : plan.denseTables()) {
                Tensor p = scope.get(t.name());
                for (long e = 0; e < p.numel(); e++) {
                    p.setFloat(e, t.initializer().value(0, e));
                }
            }
            for (SparseTableConfig t : plan.sparseTables()) {
                Tensor w = scope.get(t.name());
                for (long id = 0; id < VOCAB; id++) {
                    for (long j = 0; j < t.dim(); j++) {
                        w.setFloat(id * t.dim() + j, t.initializer().value(id, j));
                    }
                }
            }
            RoundingNoise.perturbParameters(net.main(), scope, ulps, 11);
            double[] losses = train(exe, scope, net, net.main());
            Map<String, Tensor> params = new LinkedHashMap<>();
            tableNames(plan).forEach(n -> params.put(n, scope.get(n)));
            return TrainingRecord.of(params, losses);
        }
    }

    private static TrainingRecord parameterServer(SmallWideDeep net, PsPlan plan) {
        List<TableShard> shards = new ArrayList<>();
        for (int i = 0; i < plan.servers(); i++) {
            shards.add(plan.shard(i));
        }
        InProcessPsTransport transport = new InProcessPsTransport(shards);
        PsOptions options = new PsOptions("127.0.0.1:0", Duration.ofSeconds(10), null);
        List<PsConnection> connections = new ArrayList<>();
        for (int i = 0; i < plan.servers(); i++) {
            connections.add(transport.connect("server-" + i, options));
        }
        try (PsWorker worker = new PsWorker(plan, connections, options.deadline());
             Executor exe = new Executor(ExecutorOptions.defaults(),
                     ExecContext.builder().service(PsCommunicator.class, worker).build())) {
            Scope scope = new Scope();
            exe.run(plan.workerStartup(), scope);
            double[] losses = train(exe, scope, net, plan.workerMain());
            Map<String, Tensor> params = new LinkedHashMap<>();
            for (DenseTableConfig t : plan.denseTables()) {
                Tensor p = Tensor.zeros(DType.F32, t.shape());
                worker.pullDense(t.name(), p.segment());
                params.put(t.name(), p);
            }
            for (SparseTableConfig t : plan.sparseTables()) {
                long[] all = new long[(int) VOCAB];
                for (int id = 0; id < VOCAB; id++) {
                    all[id] = id;
                }
                Tensor rows = Tensor.zeros(DType.F32, VOCAB, t.dim());
                worker.pullSparse(t.name(), Tensor.ofLongs(all, VOCAB).segment(), (int) VOCAB, rows.segment());
                params.put(t.name(), rows);
            }
            return TrainingRecord.of(params, losses);
        }
    }

    private static double[] train(Executor exe, Scope scope, SmallWideDeep net, org.fleet4j.core.ir.Program main) {
        Random data = new Random(3);
        double[] losses = new double[STEPS];
        for (int s = 0; s < STEPS; s++) {
            Map<String, Tensor> out = exe.run(main, scope, net.batch(data, BATCH, VOCAB), List.of(net.loss().name()));
            losses[s] = out.get(net.loss().name()).getFloat(0);
        }
        return losses;
    }

    private static List<String> tableNames(PsPlan plan) {
        List<String> names = new ArrayList<>();
        plan.denseTables().forEach(t -> names.add(t.name()));
        plan.sparseTables().forEach(t -> names.add(t.name()));
        return names;
    }
}
