package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategyException;
import org.junit.jupiter.api.Test;

class HierarchicalAllreducePassTest {
    private static final World TWO_NODES_OF_TWO = new World(2, 2, "cpu");

    /** Two buckets on rings 0 and 1 (as FuseAllReducePassTest splits this MLP), then the hierarchical rewrite. */
    private static Program bucketedThenHierarchical(Nets.Net net, RingLayout layout) {
        Program bucketed = new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 2)).apply(net.main()).program();
        return new HierarchicalAllreducePass(layout).apply(bucketed).program();
    }

    @Test
    void everyBucketsAllreduceBecomesReduceLeadersAllreduceBroadcastOnItsChannelsRings() {
        StandInStages.register();
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1), "avg");
        Program p = bucketedThenHierarchical(net, new RingLayout(2, 2));
        assertEquals(0, Nets.count(p, "c_allreduce"));
        List<Op> stages = p.globalBlock().ops().stream().filter(o -> o.type().startsWith("c_")).toList();
        assertEquals(List.of("c_reduce", "c_leaders_allreduce", "c_broadcast", "c_reduce", "c_leaders_allreduce",
                "c_broadcast"), stages.stream().map(Op::type).toList());
        assertEquals(List.of(2, 4, 2, 3, 5, 3), stages.stream().map(o -> o.intAttr("ring_id")).toList(),
                "channel 0: inner ring 2, leaders ring 4; channel 1: inner ring 3, leaders ring 5");
        for (int b = 0; b < 2; b++) {
            List<Op> three = stages.subList(3 * b, 3 * b + 3);
            String bucket = three.getFirst().in("X");
            assertTrue(bucket.startsWith("fused_grad_bucket"), bucket);
            for (Op stage : three) {
                assertEquals(bucket, stage.in("X"));
                assertEquals(bucket, stage.out("Out"));
            }
            assertEquals("avg", three.get(0).stringAttr("reduce"));
            assertEquals("avg", three.get(1).stringAttr("reduce"));
            assertEquals(0, three.get(0).intAttr("root"));
            assertEquals(0, three.get(2).intAttr("root"));
        }
    }

    @Test
    void theRewrittenProgramRunsItsStagesInOrderAndTrainsAsTheFlatOne() {
        StandInStages.register();
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f), "avg");
        Program hierarchical = bucketedThenHierarchical(net, new RingLayout(2, 2));
        StandInStages.CALLS.clear();
        Nets.Trained trained = Nets.train(hierarchical, net.startup(), net.loss(), 6);
        assertEquals(List.of(new StandInStages.Call("c_reduce", 2), new StandInStages.Call("c_leaders_allreduce", 4),
                new StandInStages.Call("c_broadcast", 2), new StandInStages.Call("c_reduce", 3),
                new StandInStages.Call("c_leaders_allreduce", 5), new StandInStages.Call("c_broadcast", 3)),
                StandInStages.CALLS.subList(0, 6));
        assertEquals(6 * 6, StandInStages.CALLS.size());
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 6), trained, 1e-6f);
    }

    @Test
    void anAllreduceOnARingBeyondTheFlatOnesIsLeftAlone() {
        StandInStages.register();
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{4}, new SGD(0.1));
        Program p = net.main().copy();
        Op first = p.globalBlock().ops().stream().filter(o -> o.type().equals("c_allreduce")).findFirst().orElseThrow();
        int at = p.globalBlock().ops().indexOf(first);
        p.globalBlock().removeOp(at);
        p.globalBlock().insertOp(at, "c_allreduce", first.inputs(), first.outputs(), Map.of("ring_id", 7, "reduce", "sum"));
        PassResult r = new HierarchicalAllreducePass(new RingLayout(1, 2)).apply(p);
        assertEquals(1, Nets.count(r.program(), "c_allreduce"));
        assertEquals(3, Nets.count(r.program(), "c_reduce"));
        assertTrue(r.notes().getFirst().startsWith("3 c_allreduce ops over inner groups of 2 ranks, form auto (rsag from"
                + " 256 KB): 3 reduce / leaders allreduce / broadcast, 0 reduce-scatter"), r.notes().toString());
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("ring 7 is not one of the 1 flat communicator(s)")),
                r.notes().toString());
    }

    @Test
    void theRsagFormReduceScattersIntoAShardAllreducesItOnTheCrossRingAndGathersItBack() {
        StandInStages.register();
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1), "avg");
        Program p = bucketedThenHierarchical(net, new RingLayout(2, 2, HierarchicalForm.RSAG));
        List<Op> stages = p.globalBlock().ops().stream().filter(o -> o.type().startsWith("c_")).toList();
        assertEquals(List.of("c_reducescatter@2", "c_allreduce@6", "c_allgather@2", "c_reducescatter@3", "c_allreduce@7",
                "c_allgather@3"), stages.stream().map(o -> o.type() + "@" + o.intAttr("ring_id")).toList(),
                "channel 0: inner ring 2, cross ring 6; channel 1: inner ring 3, cross ring 7");
        for (int b = 0; b < 2; b++) {
            List<Op> three = stages.subList(3 * b, 3 * b + 3);
            String bucket = three.getFirst().in("X");
            String shard = three.getFirst().out("Out");
            assertEquals(bucket + "@SHARD_0", shard);
            long n = p.globalBlock().var(bucket).shape()[0];
            assertEquals(List.of((n + 1) / 2), Arrays.stream(p.globalBlock().var(shard).shape()).boxed().toList(),
                    "the shard holds half the bucket, rounded up");
            assertEquals(shard, three.get(1).in("X"));
            assertEquals(shard, three.get(1).out("Out"));
            assertEquals(List.of(bucket, shard), List.of(three.get(2).in("X"), three.get(2).in("Shard")));
            assertEquals(bucket, three.get(2).out("Out"));
            assertEquals("avg", three.get(0).stringAttr("reduce"));
            assertEquals("avg", three.get(1).stringAttr("reduce"));
            assertEquals(2, three.get(0).intAttr("nranks"));
            assertEquals(2, three.get(2).intAttr("nranks"));
        }
    }

    @Test
    void anOddSizedBucketGetsAPaddedShardAndTrainsAsTheFlatProgram() {
        StandInStages.register();
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{5}, new Momentum(0.05, 0.9f), "avg");
        Program bucketed = new FuseAllReducePass(new GradientBucketer(1000, 50, 1000, 1)).apply(net.main()).program();
        PassResult r = new HierarchicalAllreducePass(new RingLayout(1, 2, HierarchicalForm.RSAG)).apply(bucketed);
        long n = (8 * 5 + 5) + (5 * 3 + 3);
        assertEquals(63, n);
        assertTrue(r.notes().stream().anyMatch(s -> s.contains("-> rsag: c_reducescatter on ring 1 into fused_grad_bucket_0@SHARD_0")
                && s.contains("(32 of 63 elements, padded), c_allreduce of it on cross ring 3, c_allgather on ring 1")),
                r.notes().toString());
        StandInStages.CALLS.clear();
        Nets.Trained trained = Nets.train(r.program(), net.startup(), net.loss(), 5);
        assertEquals(List.of(new StandInStages.Call("c_reducescatter", 1), new StandInStages.Call("c_allgather", 1)),
                StandInStages.CALLS.subList(0, 2));
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 5), trained, 1e-6f);
    }

    @Test
    void autoSplitsBucketsFromTheThresholdOnAndReducesTheSmallerOnes() {
        Program p = new Program();
        long threshold = HierarchicalForm.RSAG_MIN_BYTES / 4;
        for (long floats : new long[]{threshold - 1, threshold, 3}) {
            String g = "g" + floats;
            p.globalBlock().createVar(g, DType.F32, floats);
            p.globalBlock().appendOp("c_allreduce", Map.of("X", List.of(g)), Map.of("Out", List.of(g)),
                    Map.of("ring_id", 0, "reduce", "sum"));
        }
        PassResult r = new HierarchicalAllreducePass(new RingLayout(1, 2)).apply(p);
        assertEquals(List.of("c_reduce", "c_leaders_allreduce", "c_broadcast", "c_reducescatter", "c_allreduce",
                "c_allgather", "c_reduce", "c_leaders_allreduce", "c_broadcast"), Nets.opTypes(r.program()));
        assertEquals("3 c_allreduce ops over inner groups of 2 ranks, form auto (rsag from 256 KB): 2 reduce / leaders"
                + " allreduce / broadcast, 1 reduce-scatter / cross allreduce / allgather", r.notes().getFirst());
        assertTrue(r.notes().get(2).startsWith("op #1 c_allreduce of g65536 (ring 0, 0.25 MB) -> rsag"), r.notes().toString());
        PassResult pipelined = new HierarchicalAllreducePass(new RingLayout(1, 2), true).apply(p);
        assertEquals(List.of("c_reduce", "c_leaders_allreduce", "c_broadcast", "c_reducescatter", "c_allreduce",
                "c_reduce", "c_leaders_allreduce", "c_allgather", "c_broadcast"), Nets.opTypes(pipelined.program()),
                "with overlap the 256 KB bucket's gather waits for the next bucket's second stage");
        PassResult forced = new HierarchicalAllreducePass(new RingLayout(1, 2, HierarchicalForm.REDUCE)).apply(p);
        assertEquals(0, Nets.count(forced.program(), "c_reducescatter"));
        assertEquals(3, Nets.count(forced.program(), "c_reduce"));
    }

    @Test
    void aBucketWhoseSizeIsKnownOnlyAtRunTimeTakesTheReduceForm() {
        Program p = new Program();
        p.globalBlock().createVar("g", DType.F32, -1, 4);
        p.globalBlock().appendOp("c_allreduce", Map.of("X", List.of("g")), Map.of("Out", List.of("g")),
                Map.of("ring_id", 0, "reduce", "sum"));
        PassResult r = new HierarchicalAllreducePass(new RingLayout(1, 2, HierarchicalForm.RSAG)).apply(p);
        assertEquals(List.of("c_reduce", "c_leaders_allreduce", "c_broadcast"), Nets.opTypes(r.program()));
        assertTrue(r.notes().get(1).endsWith("(its size is known only at run time)"), r.notes().toString());
    }

    @Test
    void theFormComesFromItsEnvironmentVariableAndABadValueNamesItAndTheAllowedOnes() {
        assertEquals(HierarchicalForm.AUTO, HierarchicalForm.parse(null));
        assertEquals(HierarchicalForm.AUTO, HierarchicalForm.parse(" "));
        assertEquals(HierarchicalForm.RSAG, HierarchicalForm.parse("RSAG"));
        assertEquals(HierarchicalForm.REDUCE, HierarchicalForm.parse(" reduce "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HierarchicalForm.parse("ring"));
        assertEquals("environment variable FLEET_HIERARCHICAL_FORM='ring' is not a hierarchical allreduce form; allowed:"
                + " auto, reduce, rsag (unset means auto)", e.getMessage());
        assertEquals(HierarchicalForm.REDUCE, HierarchicalForm.AUTO.forBucket(HierarchicalForm.RSAG_MIN_BYTES - 1));
        assertEquals(HierarchicalForm.RSAG, HierarchicalForm.AUTO.forBucket(HierarchicalForm.RSAG_MIN_BYTES));
        assertEquals(HierarchicalForm.RSAG, HierarchicalForm.RSAG.forBucket(4));
        assertEquals(HierarchicalForm.REDUCE, HierarchicalForm.REDUCE.forBucket(1L << 30));
    }

    @Test
    void withOverlapABucketsCrossAllreduceIsInFlightWhileTheNextBucketIsReducedInsideTheNode() {
        StandInStages.register();
        StandInOverlapOps.register();
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f), "avg");
        Program bucketed = new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 1)).apply(net.main()).program();
        PassResult staged = new HierarchicalAllreducePass(new RingLayout(1, 2, HierarchicalForm.RSAG), true).apply(bucketed);
        Program p = new OverlapAllreducePass().apply(staged.program()).program();
        List<String> types = Nets.opTypes(p);
        List<String> collectives = types.stream().filter(t -> t.startsWith("c_")).toList();
        assertEquals(List.of("c_reducescatter", "c_allreduce_start", "c_reducescatter", "c_allreduce_start", "c_wait",
                "c_allgather", "c_wait", "c_allgather"), collectives);
        int firstWait = types.indexOf("c_wait");
        assertTrue(types.subList(types.indexOf("c_allreduce_start"), firstWait).contains("c_reducescatter"),
                "the second bucket's intra-node stage runs while the first crosses: " + types);
        assertTrue(staged.notes().stream().anyMatch(n -> n.startsWith("the c_allgather of fused_grad_bucket_0 (op #")
                && n.contains("follows the second stage of op #")), staged.notes().toString());
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 6), Nets.train(p, net.startup(), net.loss(), 6), 1e-6f);
        Program synchronous = new HierarchicalAllreducePass(new RingLayout(1, 2, HierarchicalForm.RSAG), false).apply(bucketed)
                .program();
        assertEquals(List.of("c_reducescatter", "c_allreduce", "c_allgather", "c_reducescatter", "c_allreduce", "c_allgather"),
                Nets.opTypes(new OverlapAllreducePass().apply(synchronous).program()).stream()
                        .filter(t -> t.startsWith("c_")).toList(), "without overlap each cross allreduce is needed at once");
    }

    @Test
    void withOverlapAndBfloat16AllreducesTheCastBackMovesWithItsGather() {
        StandInStages.register();
        StandInOverlapOps.register();
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f), "avg");
        Program cast = new Fp16AllreducePass().apply(new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 1))
                .apply(net.main()).program()).program();
        RingLayout rsag = new RingLayout(1, 2, HierarchicalForm.RSAG);
        PassResult staged = new HierarchicalAllreducePass(rsag, true).apply(cast);
        Program p = new OverlapAllreducePass().apply(staged.program()).program();
        List<String> types = Nets.opTypes(p).stream().filter(t -> t.startsWith("c_") || t.equals("allreduce_cast")).toList();
        assertEquals(List.of("allreduce_cast", "c_reducescatter", "c_allreduce_start", "allreduce_cast", "c_reducescatter",
                "c_allreduce_start", "c_wait", "c_allgather", "allreduce_cast", "c_wait", "c_allgather", "allreduce_cast"),
                types, "each bucket: cast to bfloat16, stages, cast back right after its own gather");
        assertTrue(staged.notes().stream().anyMatch(n -> n.contains("and its cast back follows the second stage")),
                staged.notes().toString());
        Program synchronous = new HierarchicalAllreducePass(rsag, false).apply(cast).program();
        Same.runs(Nets.train(synchronous, net.startup(), net.loss(), 6), Nets.train(p, net.startup(), net.loss(), 6), 0f);
    }

    @Test
    void aProgramWithoutAllreducesComesBackUnchanged() {
        Nets.Net net = Nets.mlp("relu", new int[]{8}, p -> new SGD(0.1));
        PassResult r = new HierarchicalAllreducePass(new RingLayout(1, 2)).apply(net.main());
        assertSame(net.main(), r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing rewritten"), r.notes().toString());
    }

    @Test
    void theLayoutNumbersFlatThenInnerThenLeadersRingsAndGroupsConsecutiveRanks() {
        RingLayout l = new RingLayout(2, 2);
        assertEquals(List.of(1, 3, 5), List.of(l.flat(1), l.inner(1), l.leaders(1)));
        assertEquals(List.of(2, 3), l.innerMembers(3, 4));
        assertEquals(List.of(0, 2), l.leaderRanks(4));
        assertTrue(l.isLeader(2) && !l.isLeader(3));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.inner(2));
        assertEquals("communicator 2 does not exist: nccl_comm_num is 2", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RingLayout(1, 3).leaderRanks(4));
        assertEquals(7, l.cross(1));
        assertEquals(List.of(1, 3, 5), new RingLayout(1, 2).crossMembers(5, 6));
        assertEquals(List.of(0, 3), new RingLayout(1, 3).crossMembers(3, 6));
        IllegalStateException none = assertThrows(IllegalStateException.class,
                () -> new RingLayout(2, 2, HierarchicalForm.REDUCE).cross(0));
        assertEquals("no cross rings in this layout: the hierarchical form is reduce", none.getMessage());
        assertTrue(!new RingLayout(2, 1).crossRings() && new RingLayout(2, 2).crossRings());
    }

    @Test
    void theStrategyOnTwoNodesSelectsThePassAfterBucketingAndCastingWithRanksPerNodeAsTheInnerGroup() {
        DistributedStrategy s = new DistributedStrategy().useHierarchicalAllreduce(true).ncclCommNum(2).fp16Allreduce(true);
        EffectiveStrategy e = EffectiveStrategy.resolve(s, TWO_NODES_OF_TWO);
        assertEquals(List.of("fuse_all_reduce_ops", "fp16_allreduce", "use_hierarchical_allreduce"),
                Pipeline.forStrategy(e).passes().stream().map(Pass::name).toList());
        HierarchicalAllreducePass pass = (HierarchicalAllreducePass) PassRegistry.create("use_hierarchical_allreduce", e);
        assertEquals(new RingLayout(2, 2), pass.layout(), "inter_nranks 1 stands for the 2 ranks per node");
        assertEquals(new RingLayout(2, 1), RingLayout.of(EffectiveStrategy.resolve(s, new World(1, 4, "cpu"))),
                "on one node the strategy turns hierarchical allreduce off");
    }

    @Test
    void innerGroupsThatCannotTileTheWorldAreRejectedByTheStrategyNotThePass() {
        DistributedStrategy s = new DistributedStrategy().useHierarchicalAllreduce(true).hierarchicalAllreduceInterNranks(3);
        StrategyException e = assertThrows(StrategyException.class, () -> Pipeline.forStrategy(
                EffectiveStrategy.resolve(s, TWO_NODES_OF_TWO)));
        assertTrue(e.getMessage().contains("hierarchical_allreduce_inter_nranks: 3 does not divide the world size 4"),
                e.getMessage());
    }
}
