package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.ExecutorOptions;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.fused.BucketOps;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

class FuseAllReducePassTest {
    /** 1000-byte buckets, 600-byte last bucket, two rings: the MLP below splits into two buckets. */
    private final Pass pass = new FuseAllReducePass(new GradientBucketer(1000, 50, 600, 2));

    private static List<Op> ops(Program p, String type) {
        return p.globalBlock().ops().stream().filter(o -> o.type().equals(type)).toList();
    }

    @Test
    void bucketsGradientsInBackwardOrderWithOneAllreduceEachRoundRobinOverRings() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1));
        assertEquals(6, Nets.count(net.main(), "c_allreduce"));
        PassResult r = pass.apply(net.main());
        Program p = r.program();
        List<Op> gathers = ops(p, BucketOps.GATHER);
        List<Op> allreduces = ops(p, "c_allreduce");
        assertEquals(2, gathers.size());
        assertEquals(2, allreduces.size());
        assertEquals(List.of("fc_2.b_0@GRAD", "fc_2.w_0@GRAD", "fc_1.b_0@GRAD", "fc_1.w_0@GRAD"), gathers.get(0).input("X"));
        assertEquals(List.of("fc_0.b_0@GRAD", "fc_0.w_0@GRAD"), gathers.get(1).input("X"));
        assertEquals(List.of(0, 1), allreduces.stream().map(o -> o.intAttr("ring_id")).toList());
        for (int b = 0; b < 2; b++) {
            String bucket = gathers.get(b).out("Bucket");
            assertEquals(bucket, allreduces.get(b).in("X"));
            assertEquals(bucket, allreduces.get(b).out("Out"));
            assertEquals("sum", allreduces.get(b).stringAttr("reduce"));
        }
        Var first = p.globalBlock().var(gathers.get(0).out("Bucket"));
        assertEquals(3 + 36 + 12 + 192, first.shape()[0], "fc_2.b (3) + fc_2.w (36) + fc_1.b (12) + fc_1.w (192) floats");
        assertTrue(r.notes().getFirst().startsWith("6 c_allreduce ops -> 2 bucket(s) on 2 ring(s)"), r.notes().toString());
        assertTrue(r.notes().get(1).startsWith("bucket 0: 4 gradients, 0.00 MB, ring 0"), r.notes().toString());
    }

    @Test
    void theFirstBucketIsReducedWhileBackwardStillRuns() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16, 12}, new SGD(0.1));
        List<Op> ops = pass.apply(net.main()).program().globalBlock().ops();
        int firstAllreduce = -1;
        int lastBackward = -1;
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("c_allreduce") && firstAllreduce < 0) {
                firstAllreduce = i;
            }
            if (ops.get(i).type().endsWith("_grad")) {
                lastBackward = i;
            }
        }
        assertTrue(firstAllreduce < lastBackward, "bucket 0 at op #" + firstAllreduce + ", backward ends at #" + lastBackward);
    }

    @Test
    void trainsExactlyAsOneAllreducePerGradientAndKeepsGradientsInTheirBuckets() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new Momentum(0.05, 0.9f));
        Program fused = pass.apply(net.main()).program();
        StandInAllreduce.CALLS.clear();
        Nets.Trained plain = Nets.train(net.main(), net.startup(), net.loss(), 6);
        assertEquals(6 * 6, StandInAllreduce.CALLS.size());

        StandInAllreduce.CALLS.clear();
        // temporaries dropped every other step (num_iteration_per_drop_scope 2): the gradients stay bound to their
        // bucket views, so no drop makes their producers allocate anew and the bucket copy them in
        LongAdder copied = new LongAdder();
        Executor exe = new Executor(ExecutorOptions.defaults().withIterationsPerDropScope(2),
                ExecContext.builder().service(BucketOps.CopyListener.class, copied::add).build());
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        exe.run(fused, scope, Nets.batch(0), List.of(net.loss()));
        long copiedAfterFirstStep = copied.sum();
        for (int s = 1; s < 6; s++) {
            exe.run(fused, scope, Nets.batch(s), List.of(net.loss()));
        }
        assertTrue(copiedAfterFirstStep > 0, "the first step copies the gradients into their buckets");
        assertEquals(copiedAfterFirstStep, copied.sum(),
                "after the first step every gradient is written in place into its bucket, across drops too");
        assertEquals(6 * 2, StandInAllreduce.CALLS.size());
        assertEquals(List.of(0, 1), StandInAllreduce.CALLS.subList(0, 2).stream().map(StandInAllreduce.Call::ring).toList());
        Same.runs(plain, Nets.train(fused, net.startup(), net.loss(), 6), 1e-6f);
    }

    /**
     * Each bucket is placed at its ring; with an allocator registered there (as Fleet registers the ring's process
     * group) the bucket lives in that memory, is allocated once although the executor drops its temporaries every
     * other step, and training is bit for bit what it is in ordinary memory.
     */
    @Test
    void bucketsArePlacedAtTheirRingAndTrainTheSameInPlacedMemory() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16, 12}, new SGD(0.1));
        Program fused = pass.apply(net.main()).program();
        List<Op> gathers = ops(fused, BucketOps.GATHER);
        assertEquals(List.of("ring:0", "ring:1"), gathers.stream().map(o -> o.stringAttr("placement")).toList());
        Nets.Trained ordinary = trainDroppingTemporaries(fused, net);
        List<String> given = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int b = 0; b < 2; b++) {
            String bucket = gathers.get(b).out("Bucket");
            expected.add("ring:" + b + " " + bucket + " " + fused.globalBlock().var(bucket).shape()[0] * 4);
        }
        try (Arena arena = Arena.ofShared()) {
            ExecContext context = ExecContext.builder()
                    .placement("ring:0", (name, bytes) -> {
                        given.add("ring:0 " + name + " " + bytes);
                        return arena.allocate(bytes, 4096);
                    })
                    .placement("ring:1", (name, bytes) -> {
                        given.add("ring:1 " + name + " " + bytes);
                        return arena.allocate(bytes, 4096);
                    }).build();
            Nets.Trained placed = Nets.train(fused, net.startup(), net.loss(), 7,
                    ExecutorOptions.defaults().withIterationsPerDropScope(2), context);
            assertEquals(expected, given, "one allocation per bucket, from its ring's allocator");
            Same.runs(ordinary, placed, 0f);
        }
    }

    private static Nets.Trained trainDroppingTemporaries(Program main, Nets.Net net) {
        return Nets.train(main, net.startup(), net.loss(), 7, ExecutorOptions.defaults().withIterationsPerDropScope(2));
    }

    @Test
    void sparseGradientsKeepTheirOwnAllreduce() {
        StandInAllreduce.register();
        Program main = new Program().setRandomSeed(5);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var h = nn.fc(nn.embedding(ids, 20, 4, true), 3, "relu");
        List<ParamGrad> grads = Backward.appendBackward(nn.mean(h));
        for (ParamGrad pg : grads) {
            main.globalBlock().appendOp("c_allreduce", Map.of("X", List.of(pg.grad())), Map.of("Out", List.of(pg.grad())),
                    Map.of("ring_id", 0, "reduce", "avg"));
        }
        PassResult r = pass.apply(main);
        assertEquals(1, ops(r.program(), BucketOps.GATHER).size());
        assertEquals(2, ops(r.program(), "c_allreduce").size(), "one for the dense bucket, one for the sparse gradient");
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("sparse gradients are never fused")), r.notes().toString());
    }

    @Test
    void aProgramWithoutAllreducesComesBackUnchanged() {
        Nets.Net net = Nets.mlp("relu", new int[]{8}, p -> new SGD(0.1));
        PassResult r = pass.apply(net.main());
        assertSame(net.main(), r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing fused"), r.notes().toString());
    }
}
