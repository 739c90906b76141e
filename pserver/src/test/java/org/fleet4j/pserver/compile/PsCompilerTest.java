package org.fleet4j.pserver.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.pserver.table.RowAdmission;
import org.fleet4j.pserver.table.RowEviction;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.Protocol;
import org.junit.jupiter.api.Test;

/** The PS compile step on the ctr model (a small Wide&amp;Deep): the worker program, the server tables, the errors. */
class PsCompilerTest {
    private static final Set<String> OPTIMIZER_OPS = Set.of("sgd", "momentum", "adagrad", "adam", "adamw",
            "lr_schedule", "increment");

    private static DistributedStrategy sync() {
        return new DistributedStrategy().mode(Mode.PS).aSync(false);
    }

    private static Map<String, Long> opCounts(Program p) {
        return p.globalBlock().ops().stream().collect(Collectors.groupingBy(Op::type, TreeMap::new, Collectors.counting()));
    }

    @Test
    void ctrWorkerProgramHasNoOptimizerOpsAndPullsAndPushesEveryTable() {
        SmallWideDeep net = SmallWideDeep.build(40, 4, new Adagrad(0.05));
        Map<String, Long> before = opCounts(net.main());
        PsPlan plan = PsCompiler.compile(net.main(), sync(), 2);
        Map<String, Long> after = opCounts(plan.workerMain());

        int sparse = 2 * SmallWideDeep.SLOTS;
        int dense = 4; // two fc layers: weight and bias each
        assertEquals(sparse + dense, before.get("adagrad"));
        assertTrue(after.keySet().stream().noneMatch(OPTIMIZER_OPS::contains), "optimizer ops left: " + after);
        assertFalse(after.containsKey("lookup_table"), "every lookup is sparse and trained: " + after);
        assertFalse(after.containsKey("lookup_table_grad"), after.toString());
        assertEquals((long) sparse, after.get("pull_sparse"));
        assertEquals((long) sparse, after.get("push_sparse"));
        assertEquals((long) dense, after.get("pull_dense"));
        assertEquals((long) dense, after.get("push_dense"));
        assertEquals(sparse, plan.sparseTables().size());
        assertEquals(dense, plan.denseTables().size());

        List<Op> ops = plan.workerMain().globalBlock().ops();
        for (int i = 0; i < dense; i++) {
            assertEquals("pull_dense", ops.get(i).type(), "dense parameters are pulled before forward");
        }
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("push_dense")) {
                String grad = ops.get(i).in("Grad");
                assertTrue(ops.get(i - 1).allOutputs().contains(grad), "push_dense of " + grad + " follows its writer");
            }
        }
        for (var t : plan.sparseTables()) {
            assertFalse(plan.workerMain().globalBlock().hasVar(t.name()), "table " + t.name() + " left the worker");
            assertFalse(plan.workerStartup().globalBlock().hasVar(t.name()), "the worker does not initialise " + t.name());
            assertEquals(new ServerOptimizer.Adagrad(0.05f, 1e-6f), t.optimizer());
        }
        assertTrue(plan.workerStartup().globalBlock().ops().stream()
                .noneMatch(op -> op.allOutputs().contains(Optimizer.STEP_VAR)), "no step counter on the worker");
        assertTrue(opCounts(net.main()).equals(before), "the user's program is left as it was");
    }

    @Test
    void serverOptimizersTakeTheWorkerOpsHyperParameters() {
        assertEquals(new ServerOptimizer.Sgd(0.1f, 0.01f), optimizerOf(new SGD(LrSchedule.constant(0.1), 0.01f)));
        assertEquals(new ServerOptimizer.Momentum(0.1f, 0.8f, true, 0.001f),
                optimizerOf(new Momentum(LrSchedule.constant(0.1), 0.8f, true, 0.001f)));
        assertEquals(new ServerOptimizer.Adagrad(0.05f, 1e-4f), optimizerOf(new Adagrad(LrSchedule.constant(0.05), 1e-4f)));
        assertEquals(new ServerOptimizer.Adam(0.01f, 0.8f, 0.99f, 1e-7f),
                optimizerOf(new Adam(LrSchedule.constant(0.01), 0.8f, 0.99f, 1e-7f, true)));
    }

    private static ServerOptimizer optimizerOf(Optimizer optimizer) {
        PsPlan plan = PsCompiler.compile(SmallWideDeep.build(10, 2, optimizer).main(), sync(), 1);
        assertEquals(plan.sparseTables().getFirst().optimizer(), plan.denseTables().getFirst().optimizer());
        return plan.denseTables().getFirst().optimizer();
    }

    @Test
    void modeComesFromTheStrategy() {
        Program main = SmallWideDeep.build(10, 2, new SGD(0.1)).main();
        assertEquals(PsMode.SYNC, PsCompiler.compile(main, sync(), 1).mode());
        assertEquals(PsMode.HALF_ASYNC, PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSync(true), 1)
                .mode(), "DistributeTranspiler's rule: a_sync without runtime_split_send_recv is half-async");
        assertEquals(PsMode.ASYNC, PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSync(true)
                .aSyncConfigs(c -> c.runtimeSplitSendRecv(true)), 1).mode());
        assertEquals(PsMode.GEO, PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSync(true)
                .aSyncConfigs(c -> c.kSteps(4).runtimeSplitSendRecv(true)), 1).mode());
        PsCompileException geoWithoutAsync = assertThrows(PsCompileException.class, () -> PsCompiler.compile(main,
                new DistributedStrategy().mode(Mode.PS).aSync(false).aSyncConfigs(c -> c.kSteps(4)), 1));
        assertEquals("a_sync_configs.k_steps 4 asks for geo mode, which needs a_sync: true; set a_sync: true for geo,"
                + " or k_steps: -1 for sync mode", geoWithoutAsync.getMessage());
        PsPlan noLaunchBarrier = PsCompiler.compile(main,
                new DistributedStrategy().mode(Mode.PS).aSyncConfigs(c -> c.launchBarrier(false)), 1);
        assertFalse(noLaunchBarrier.communicator().launchBarrier(), "launch_barrier: false is honoured, not refused");
        assertTrue(noLaunchBarrier.describe().contains("launch_barrier false: Fleet.initWorker waits for no server; a"
                + " worker connects to a server at its first call to it, retrying until that call's deadline"),
                noLaunchBarrier.describe());
        assertTrue(PsCompiler.compile(main, sync(), 1).describe().contains("launch_barrier true: Fleet.initWorker"
                + " connects to every server, waiting for each, before the first step"));
    }

    @Test
    void aRegularizedParameterIsRefusedNamingIt() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(x, 2, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(1e-4f)), ParamAttr.DEFAULT);
        new SGD(0.1).minimize(nn.mean(nn.softmaxWithCrossEntropy(logits, y)));
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(nn.main(), sync(), 1));
        assertEquals("parameter fc_0.w_0 has the regularizer L2Decay(1.0E-4), which the parameter-server compile step"
                + " does not carry to the servers; drop the regularizer in strategy mode ps, or train in collective mode",
                e.getMessage());
    }

    @Test
    void aGradientClipIsRefused() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(x, 2, null);
        new SGD(0.1).withGradClip(new org.fleet4j.core.optim.ClipGradByGlobalNorm(1f))
                .minimize(nn.mean(nn.softmaxWithCrossEntropy(logits, y)));
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(nn.main(), sync(), 1));
        assertEquals("the optimizer clips the gradients by their global norm (grad_clip ClipGradByGlobalNorm), which the"
                + " parameter-server compile step does not carry to the servers; drop grad_clip in strategy mode ps, or"
                + " train in collective mode", e.getMessage());
    }

    @Test
    void everyModeButAsyncEndsTheStepWithSendBarrierAndThePlanShowsTheCommunicator() {
        Program main = SmallWideDeep.build(10, 2, new SGD(0.1)).main();
        for (boolean runtimeSplit : new boolean[]{false, true}) {
            for (int kSteps : new int[]{-1, 3}) {
                PsPlan plan = PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS)
                        .aSyncConfigs(c -> c.kSteps(kSteps).runtimeSplitSendRecv(runtimeSplit).maxMergeVarNum(5)), 2, 16);
                List<Op> ops = plan.workerMain().globalBlock().ops();
                assertEquals(plan.mode() != PsMode.ASYNC, ops.getLast().type().equals(PsOpTypes.SEND_BARRIER),
                        plan.mode() + ": " + ops.getLast().type());
                assertTrue(plan.describe().contains("\ncommunicator: " + plan.mode().spelling() + ": "), plan.describe());
            }
        }
        String async = PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS)
                .aSyncConfigs(c -> c.runtimeSplitSendRecv(true).maxMergeVarNum(5).sendQueueSize(7)), 2, 16).describe();
        assertTrue(async.contains("(send_queue_size 7)") && async.contains("up to 5 queued gradients"), async);
        PsPlan geo = PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSyncConfigs(c -> c.kSteps(3)), 2, 16);
        assertTrue(geo.describe().contains("every 3 steps (k_steps)"), geo.describe());
        assertEquals("delta", geo.shard(0).denseConfigs().getFirst().optimizer().name(),
                "geo servers add deltas; the optimizer runs on the workers");
        assertEquals("sgd", geo.denseTables().getFirst().optimizer().name());
    }

    @Test
    void describeShowsTheModeAndWhereEveryTableAndBlockLives() {
        PsPlan plan = PsCompiler.compile(SmallWideDeep.build(10, 2, new SGD(0.1)).main(), sync(), 2, 16);
        String text = plan.describe();
        assertTrue(text.startsWith("parameter-server plan: mode sync, 2 servers\n"), text);
        assertTrue(text.contains("server 0:\n  dense fc_0.w_0.block0 [0, 40)\n"), text);
        assertTrue(text.contains("server 1:\n  dense fc_0.w_0.block1 [40, 80)\n"), text);
        assertTrue(text.contains("  sparse: the rows of all 6 tables whose id has KeyHash.serverOf(id, 2) = 1\n"), text);
        assertTrue(text.contains("  embedding_1.w_0 dim 2 Sgd[lr=0.1, weightDecay=0.0], rows start Uniform[min="), text);
        assertTrue(text.contains("learning rate: constant"), text);
    }

    @Test
    void anOptimizerTheServersDoNotRunIsNamed() {
        Program main = SmallWideDeep.build(10, 2, new AdamW(0.01, 0.01f)).main();
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(main, sync(), 1));
        assertTrue(e.getMessage().startsWith("optimizer op adamw (parameter "), e.getMessage());
        assertTrue(e.getMessage().contains("sgd, momentum, adagrad and adam"), e.getMessage());
    }

    @Test
    void aChangingLearningRateIsNamed() {
        Program main = SmallWideDeep.build(10, 2, new SGD(LrSchedule.stepDecay(0.1, 10, 0.5), 0f)).main();
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(main, sync(), 1));
        assertEquals("learning-rate schedule step cannot run on the parameter servers yet: they keep the learning rate"
                + " constant; use LrSchedule.constant", e.getMessage());
    }

    @Test
    void collectiveModeIsNamed() {
        Program main = SmallWideDeep.build(10, 2, new SGD(0.1)).main();
        PsCompileException e = assertThrows(PsCompileException.class,
                () -> PsCompiler.compile(main, new DistributedStrategy(), 1));
        assertEquals("the parameter-server compile step needs mode ps, but the strategy's mode is collective;"
                + " set mode: ps", e.getMessage());
    }

    @Test
    void anOpThatReadsASparseTableIsNamed() {
        SmallWideDeep net = SmallWideDeep.build(10, 2, new SGD(0.1));
        Program main = net.main();
        String table = main.globalBlock().ops().stream().filter(op -> op.type().equals("lookup_table")).findFirst()
                .orElseThrow().in("W");
        main.globalBlock().appendOp("scale", Map.of("X", List.of(table)), Map.of("Out", List.of("peek")),
                Map.of("scale", 2f));
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(main, sync(), 1));
        assertEquals("op scale reads " + table + ", which moves to the parameter servers (a sparse table, optimizer"
                + " state or learning rate); the parameter-server compile step cannot transpile it", e.getMessage());
    }

    @Test
    void aProgramWithoutMinimizeIsNamed() {
        SmallWideDeep net = SmallWideDeep.build(10, 2, new SGD(0.1));
        Program forward = net.main().copy();
        forward.setStartupProgram(net.startup());
        for (int i = forward.globalBlock().ops().size() - 1; i >= 0; i--) {
            if (forward.globalBlock().ops().get(i).type().equals("sgd")) {
                forward.globalBlock().removeOp(i);
            }
        }
        PsCompileException e = assertThrows(PsCompileException.class, () -> PsCompiler.compile(forward, sync(), 1));
        assertEquals("the program has no optimizer ops; call minimize before the parameter-server compile step",
                e.getMessage());
    }

    @Test
    void tensorFuseWritesOnePullFirstAndOnePushAfterBackward() {
        SmallWideDeep net = SmallWideDeep.build(40, 4, new Adagrad(0.05));
        PsPlan plan = PsCompiler.compile(net.main(), sync().tensorFuse(true), 2);
        List<Op> ops = plan.workerMain().globalBlock().ops();
        Map<String, Long> counts = opCounts(plan.workerMain());
        for (String single : List.of("pull_sparse", "push_sparse", "pull_dense", "push_dense")) {
            assertFalse(counts.containsKey(single), single + " is fused: " + counts);
        }
        Op pull = ops.getFirst();
        assertEquals(PsOpTypes.PULL_FUSED, pull.type());
        assertEquals(2 * SmallWideDeep.SLOTS, pull.input("Ids").size());
        assertEquals(2 * SmallWideDeep.SLOTS, pull.output("Out").size());
        assertEquals(4, pull.output("Dense").size());
        assertEquals(List.of(PsOpTypes.PUSH_FUSED, PsOpTypes.SEND_BARRIER),
                List.of(ops.get(ops.size() - 2).type(), ops.getLast().type()));
        Op push = ops.get(ops.size() - 2);
        assertEquals(2 * SmallWideDeep.SLOTS, push.input("Grad").size());
        assertEquals(4, push.input("DenseGrad").size());
        assertTrue(plan.fused());
        assertTrue(plan.describe().contains("transport: protocol grpc, tensor_fuse: one pull (pull_fused, at the"
                + " step's start) and one push (push_fused, after backward) per server per step"), plan.describe());
        assertTrue(PsCompiler.compile(net.main(), sync().protocol(Protocol.STAR_SERVER), 2).fused(),
                "star_server's pull/push semantics fuse a step whatever tensor_fuse says");
        assertFalse(PsCompiler.compile(net.main(), sync(), 2).fused());
    }

    @Test
    void tensorFuseNamesSparseIdsThatAnOpComputes() {
        SmallWideDeep net = SmallWideDeep.build(10, 2, new SGD(0.1));
        Program main = net.main();
        Op lookup = main.globalBlock().ops().stream().filter(op -> op.type().equals("lookup_table")).findFirst()
                .orElseThrow();
        String ids = lookup.in("Ids");
        main.globalBlock().appendOp("fill_constant", Map.of(), Map.of("Out", List.of(ids)),
                Map.of("shape", main.globalBlock().var(ids).shape(), "dtype", "int64", "value", 1f));
        PsCompileException e = assertThrows(PsCompileException.class,
                () -> PsCompiler.compile(main, sync().tensorFuse(true), 1));
        assertEquals("tensor_fuse pulls every table at the start of the step, but the ids " + ids + " of sparse table "
                + lookup.in("W") + " are computed by an op of the program; feed them, or set tensor_fuse: false",
                e.getMessage());
    }

    @Test
    void sparseTableConfigsGiveTheNamedTablesTheirAdmissionAndEviction() {
        SmallWideDeep net = SmallWideDeep.build(40, 4, new Adagrad(0.05));
        List<String> tables = PsCompiler.compile(SmallWideDeep.build(40, 4, new Adagrad(0.05)).main(), sync(), 1)
                .sparseTables().stream().map(t -> t.name()).toList();
        DistributedStrategy s = sync().sparseTableConfigs(c -> c.tableNames(tables.getFirst()).filter("cbf").filterFreq(3)
                .maxElementSize(5000).stepsToLive(100).shrinkEverySteps(50));
        PsPlan plan = PsCompiler.compile(net.main(), s, 2);
        var first = plan.sparseTables().getFirst();
        assertEquals(new RowAdmission.CountingBloom(3, 5000, 0.01), first.admission());
        assertEquals(RowEviction.stepsToLive(100).withShrinkEverySteps(50), first.eviction());
        assertEquals(new RowAdmission.Everyone(), plan.sparseTables().get(1).admission(), "only the named table");
        assertTrue(plan.describe().contains("    rows: counting Bloom filter: a row at an id's 3rd sighting"),
                plan.describe());

        PsCompileException noFreq = assertThrows(PsCompileException.class, () -> PsCompiler.compile(
                SmallWideDeep.build(40, 4, new Adagrad(0.05)).main(), sync().sparseTableConfigs(c -> c.filter("counter")), 1));
        assertEquals("sparse_table_configs.filter counter admits an id at its filter_freq-th sighting, but"
                + " sparse_table_configs.filter_freq is 0; set it to 1 or more", noFreq.getMessage());
        SmallWideDeep untouched = SmallWideDeep.build(40, 4, new Adagrad(0.05));
        String before = untouched.main().toString();
        PsCompileException unknown = assertThrows(PsCompileException.class, () -> PsCompiler.compileInPlace(
                untouched.main(), sync().sparseTableConfigs(c -> c.tableNames("emb_x")), 1));
        assertTrue(unknown.getMessage().startsWith("sparse_table_configs.table_names names 'emb_x', which is not a"
                + " sparse table of the program; its sparse tables are ["), unknown.getMessage());
        assertEquals(before, untouched.main().toString(), "a refused setting leaves the program as it was");
    }
}
