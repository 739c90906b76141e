package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.ops.fused.AllreduceCastOp;
import org.fleet4j.core.ops.fused.BucketOps;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class OverlapAllreducePassTest {
    private final Pass pass = new OverlapAllreducePass();

    @BeforeAll
    static void registerStandIns() {
        StandInOverlapOps.register();
    }

    private static List<Op> ops(Program p) {
        return p.globalBlock().ops();
    }

    /** The vars of a bucket's gradients and the bucket itself (what a start's X stands for), or X alone. */
    private static Set<String> memoryOf(Program p, String x) {
        Set<String> vars = new HashSet<>(Set.of(x));
        for (Op op : ops(p)) {
            if (op.type().equals(BucketOps.GATHER) && op.out("Bucket").equals(x)) {
                vars.addAll(op.output("Out"));
            }
        }
        return vars;
    }

    private static boolean touches(Op op, Set<String> vars) {
        return op.allInputs().stream().anyMatch(vars::contains) || op.allOutputs().stream().anyMatch(vars::contains);
    }

    /**
     * Every start is right after the last op that touches its tensor, its wait right before the next op that does,
     * nothing in between touches it; returns how many ops ran between each start and its wait.
     */
    private static List<Integer> checkWindows(Program p) {
        List<Op> ops = ops(p);
        List<Integer> windows = new ArrayList<>();
        for (int s = 0; s < ops.size(); s++) {
            if (!ops.get(s).type().equals(CollectiveOpTypes.ALLREDUCE_START)) {
                continue;
            }
            Op start = ops.get(s);
            Set<String> vars = memoryOf(p, start.in("X"));
            int w = s + 1;
            while (!(ops.get(w).type().equals(CollectiveOpTypes.WAIT) && ops.get(w).in("Work").equals(start.out("Work")))) {
                assertTrue(!touches(ops.get(w), vars), "op #" + w + " " + ops.get(w) + " touches " + vars + " in flight");
                w++;
            }
            int before = s - 1;
            while (before >= 0 && ops.get(before).type().equals(CollectiveOpTypes.ALLREDUCE_START)) {
                before--;
            }
            assertTrue(before < 0 || touches(ops.get(before), vars) || ops.get(before).type().startsWith("conditional_"),
                    "start #" + s + " follows the last op that touches " + vars + ", not " + ops.get(before));
            int after = w + 1;
            while (after < ops.size() && ops.get(after).type().equals(CollectiveOpTypes.WAIT)) {
                after++;
            }
            assertTrue(after == ops.size() || touches(ops.get(after), vars) || ops.get(after).type().startsWith("conditional_"),
                    "wait #" + w + " precedes the next op that touches " + vars + ", not " + ops.get(after));
            windows.add((int) ops.subList(s + 1, w).stream()
                    .filter(o -> !o.type().equals(CollectiveOpTypes.ALLREDUCE_START) && !o.type().equals(CollectiveOpTypes.WAIT))
                    .count());
        }
        return windows;
    }

    @Test
    void eachGradientsAllreduceStartsWhenItIsProducedAndIsWaitedForByItsUpdate() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1));
        PassResult r = pass.apply(net.main());
        Program p = r.program();
        assertEquals(0, Nets.count(p, "c_allreduce"));
        assertEquals(6, Nets.count(p, CollectiveOpTypes.ALLREDUCE_START));
        assertEquals(6, Nets.count(p, CollectiveOpTypes.WAIT));
        List<Integer> windows = checkWindows(p);
        assertTrue(windows.getFirst() >= 10, "the last layer's gradients are reduced while backward runs on: " + windows);
        int firstWait = Nets.opTypes(p).indexOf(CollectiveOpTypes.WAIT);
        int lastGrad = Nets.opTypes(p).lastIndexOf("matmul_grad");
        assertTrue(Nets.opTypes(p).indexOf(CollectiveOpTypes.ALLREDUCE_START) < lastGrad && lastGrad < firstWait, Nets.opTypes(p).toString());
        assertTrue(r.notes().getFirst().equals("6 of 6 c_allreduce ops overlap the ops around them (c_allreduce_start / c_wait)"),
                r.notes().toString());
        assertEquals(Nets.opTypes(net.main()).size() + 6, ops(p).size(), "each allreduce became two ops");
        Var work = p.globalBlock().var(ops(p).stream().filter(o -> o.type().equals(CollectiveOpTypes.ALLREDUCE_START)).findFirst()
                .orElseThrow().out("Work"));
        assertEquals(DType.I64, work.dtype());
    }

    @Test
    void bucketsStartAfterTheirGatherAndAreWaitedForBeforeAnyOfTheirGradientsIsRead() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1));
        Program fused = new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 1)).apply(net.main()).program();
        Program p = pass.apply(fused).program();
        List<String> types = Nets.opTypes(p);
        assertEquals(2, Nets.count(p, CollectiveOpTypes.ALLREDUCE_START));
        for (int s = 0; s < types.size(); s++) {
            if (types.get(s).equals(CollectiveOpTypes.ALLREDUCE_START)) {
                assertEquals(BucketOps.GATHER, types.get(s - 1), "a bucket starts right after it is gathered");
            }
        }
        List<Integer> windows = checkWindows(p);
        assertTrue(windows.getFirst() > 0, windows.toString());
    }

    @Test
    void regionsOfGradientMergeKeepEachStartAndWaitInside() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{12}, new Momentum(0.05, 0.9f), "avg");
        Program merged = new GradientMergePass(2, true).apply(net.main()).program();
        Program p = pass.apply(merged).program();
        checkWindows(p);
        List<String> types = Nets.opTypes(p);
        int begin = types.indexOf(ControlOps.BEGIN);
        int end = types.indexOf(ControlOps.END);
        for (int i = 0; i < types.size(); i++) {
            if (types.get(i).equals(CollectiveOpTypes.ALLREDUCE_START) || types.get(i).equals(CollectiveOpTypes.WAIT)) {
                assertTrue(begin < i && i < end, types.get(i) + " at #" + i + " outside the region #" + begin + "..#" + end);
            }
        }
    }

    @Test
    void anAllreduceWhoseResultIsNeededAtOnceIsLeftAlone() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, 4).setData(true);
        b.createVar("g", DType.F32, 4);
        b.createVar("out", DType.F32, 4);
        b.appendOp("scale", Map.of("X", List.of("x")), Map.of("Out", List.of("g")), Map.of("scale", 2f));
        b.appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of("g")), Map.of("Out", List.of("g")), Map.of());
        b.appendOp("scale", Map.of("X", List.of("g")), Map.of("Out", List.of("out")), Map.of("scale", 2f));
        PassResult r = pass.apply(p);
        assertSame(p, r.program(), r.notes().toString());
        assertTrue(r.notes().getFirst().startsWith("nothing overlapped"), r.notes().toString());
        assertTrue(r.notes().get(1).equals("left op #1 c_allreduce of g as it is: op #2 scale needs it right away"),
                r.notes().toString());
        Nets.Net single = Nets.mlp("relu", new int[]{12}, prog -> new SGD(0.1));
        assertSame(single.main(), pass.apply(single.main()).program());
    }

    /** fp16_allreduce's bfloat16 allreduces overlap too: the cast back into the gradient follows the wait. */
    @Test
    void bfloat16AllreducesOverlapAndTheirCastBackFollowsTheWait() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f));
        Program cast = new Fp16AllreducePass().apply(net.main()).program();
        PassResult r = pass.apply(cast);
        Program p = r.program();
        assertEquals(6, Nets.count(p, CollectiveOpTypes.ALLREDUCE_START), r.notes().toString());
        List<Op> ops = ops(p);
        for (int w = 0; w < ops.size(); w++) {
            if (ops.get(w).type().equals(CollectiveOpTypes.WAIT)) {
                Op back = ops.get(w + 1);
                assertEquals(AllreduceCastOp.TYPE, back.type(), "op after the wait #" + w);
                assertEquals(ops.get(w).in("X"), back.in("X"));
            }
        }
        List<Integer> windows = checkWindows(p);
        assertTrue(windows.getFirst() > 1, windows.toString());
        Same.runs(train(cast, net, ExecutorOptions.defaults()), train(p, net, ExecutorOptions.defaults().withNumThreads(4)), 0f);
    }

    private static Nets.Trained train(Program main, Nets.Net net, ExecutorOptions options) {
        return Nets.train(main, net.startup(), net.loss(), 8, options);
    }

    /** Unfused and bucketed, on one thread and on four: the overlapped program trains exactly as the plain one. */
    @Test
    void overlappedProgramsTrainExactlyAsThePlainOneOnOneAndFourThreads() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Adam(0.02));
        Nets.Trained plain = train(net.main(), net, ExecutorOptions.defaults());
        Program overlapped = pass.apply(net.main()).program();
        Program bucketed = pass.apply(new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 1)).apply(net.main())
                .program()).program();
        for (int threads : new int[]{1, 4}) {
            ExecutorOptions o = ExecutorOptions.defaults().withNumThreads(threads);
            Same.runs(plain, train(overlapped, net, o), 0f);
            Same.runs(plain, train(bucketed, net, o), 0f);
        }
    }

    @Test
    void thePipelineOverlapsOnlyWhenSyncNcclAllreduceIsOff() {
        EffectiveStrategy sync = EffectiveStrategy.resolve(new DistributedStrategy(), new World(1, 2, "cpu"));
        EffectiveStrategy async = EffectiveStrategy.resolve(new DistributedStrategy().syncNcclAllreduce(false),
                new World(1, 2, "cpu"));
        List<String> syncPasses = Pipeline.forStrategy(sync).passes().stream().map(Pass::name).toList();
        List<String> asyncPasses = Pipeline.forStrategy(async).passes().stream().map(Pass::name).toList();
        assertTrue(!syncPasses.contains(OverlapAllreducePass.NAME), syncPasses.toString());
        assertEquals(OverlapAllreducePass.NAME, asyncPasses.getLast(), asyncPasses.toString());
    }
}
