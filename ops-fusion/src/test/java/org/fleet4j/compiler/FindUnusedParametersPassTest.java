package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;

/**
 * A classifier with an auxiliary head (fc_2) whose loss counts only on some steps ({@code aux_on}); in the
 * "conditional" form the auxiliary head's gradient ops run inside {@code conditional_begin(use_aux)}, so fc_2 gets no
 * gradient at all on the other steps, as a branch not taken. With find_unused_parameters the conditional form trains
 * exactly as the plain one, where fc_2's gradient is zero on those steps.
 */
class FindUnusedParametersPassTest {
    private static final int STEPS = 6;
    private static final List<String> AUX_GRADS = List.of("fc_2.w_0@GRAD", "fc_2.b_0@GRAD");

    static Nets.Net auxNet(boolean conditional) {
        StandInAllreduce.register();
        Program main = new Program().setRandomSeed(21);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var auxOn = nn.data("aux_on", DType.F32, 1);
        Var ce = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 12, "relu"), 3, null), y));
        Var loss = nn.add(ce, nn.mul(nn.mean(nn.fc(x, 1, null)), auxOn));
        List<ParamGrad> grads = Backward.appendBackward(loss);
        if (conditional) {
            Var useAux = nn.data("use_aux", DType.I64, 1);
            List<Op> ops = main.globalBlock().ops();
            List<Integer> writers = new ArrayList<>();
            for (String g : AUX_GRADS) {
                writers.addAll(ProgramEdits.writers(ops, g));
            }
            int first = writers.stream().mapToInt(Integer::intValue).min().orElseThrow();
            int last = writers.stream().mapToInt(Integer::intValue).max().orElseThrow();
            main.globalBlock().insertOp(last + 1, ControlOps.END, Map.of(), Map.of(), Map.of());
            main.globalBlock().insertOp(first, ControlOps.BEGIN, Map.of("Cond", List.of(useAux.name())), Map.of(), Map.of());
        }
        for (ParamGrad pg : grads) {
            main.globalBlock().appendOp(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(pg.grad())),
                    Map.of("Out", List.of(pg.grad())), Map.of("ring_id", 0, "reduce", "avg"));
        }
        new Adam(0.02).applyGradients(main, grads);
        return new Nets.Net(main, startup, loss.name());
    }

    /** The auxiliary head counts on odd steps only, so the first step already lacks its gradient. */
    static Map<String, Tensor> feed(int step) {
        Map<String, Tensor> feed = new LinkedHashMap<>(Nets.batch(step));
        feed.put("aux_on", Tensor.of(new float[]{step % 2}, 1));
        feed.put("use_aux", Tensor.ofLongs(new long[]{step % 2}, 1));
        return feed;
    }

    private static Nets.Trained train(Program main, Program startup, String loss) {
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        List<Float> losses = new ArrayList<>();
        for (int s = 0; s < STEPS; s++) {
            Map<String, Tensor> feed = feed(s);
            if (!main.globalBlock().hasVar("use_aux")) {
                feed.remove("use_aux");
            }
            losses.add(exe.run(main, scope, feed, List.of(loss)).get(loss).getFloat(0));
        }
        Map<String, float[]> params = new LinkedHashMap<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.persistable() && v.dtype() == DType.F32) {
                params.put(v.name(), scope.get(v.name()).toFloatArray());
            }
        }
        return new Nets.Trained(losses, params);
    }

    @Test
    void aGradientWrittenOnlyInsideAConditionalRegionIsZeroFilledJustBeforeIt() {
        Nets.Net net = auxNet(true);
        PassResult r = new FindUnusedParametersPass().apply(net.main());
        List<Op> ops = r.program().globalBlock().ops();
        int begin = Nets.opTypes(r.program()).indexOf(ControlOps.BEGIN);
        assertEquals(List.of("fill_constant", "fill_constant"), Nets.opTypes(r.program()).subList(begin - 2, begin));
        assertEquals(List.of("fc_2.w_0@GRAD", "fc_2.b_0@GRAD"), List.of(ops.get(begin - 2).out("Out"), ops.get(begin - 1).out("Out")));
        assertEquals(0f, ops.get(begin - 2).floatAttr("value"));
        assertTrue(r.notes().getFirst().startsWith("2 of 6 allreduced gradients may be missing on a step"), r.notes().toString());
        int beginBefore = Nets.opTypes(net.main()).indexOf(ControlOps.BEGIN);
        assertEquals(begin - 2, beginBefore);
        assertTrue(r.notes().get(1).startsWith("fc_2.w_0@GRAD: written only inside the conditional region of op #"
                + beginBefore), r.notes().toString());
    }

    @Test
    void withoutTheKnobBucketingLeavesSuchGradientsOutAndSaysWhy() {
        PassContext context = PassContext.of(EffectiveStrategy.resolve(new DistributedStrategy(), new World(1, 2, "cpu")));
        PassResult r = FuseAllReducePass.of(context).apply(auxNet(true).main());
        assertEquals(3, Nets.count(r.program(), "c_allreduce"), "one bucket and the two auxiliary gradients alone");
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("c_allreduce of fc_2.w_0@GRAD: it is written only inside a"
                + " conditional region")), r.notes().toString());
    }

    @Test
    void compiledWithBucketsTheConditionalProgramTrainsAsThePlainOne() {
        DistributedStrategy s = new DistributedStrategy().findUnusedParameters(true).fuseGradSizeInMB(1);
        Compilation c = Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))).run(auxNet(true).main());
        assertTrue(c.describe().startsWith("compiler pipeline: find_unused_parameters -> fuse_all_reduce_ops\n"), c.describe());
        assertEquals(1, Nets.count(c.program(), "c_allreduce"), "every gradient joins the one bucket:\n" + c.describe());
        Nets.Net plain = auxNet(false);
        Nets.Trained expected = train(plain.main(), plain.startup(), plain.loss());
        Nets.Trained actual = train(c.program(), plain.startup(), plain.loss());
        Same.runs(expected, actual, 1e-6f);
    }

    @Test
    void uncompiledTheConditionalProgramFailsOnItsFirstStepNamingTheMissingGradient() {
        Nets.Net net = auxNet(true);
        Exception e = assertThrows(Exception.class, () -> train(net.main(), net.startup(), net.loss()));
        assertTrue(e.getMessage().contains("c_allreduce: input X (fc_2.w_0@GRAD) has no value"), e.getMessage());
    }

    @Test
    void aProgramWhoseGradientsAreAllProducedComesBackUnchanged() {
        Nets.Net net = auxNet(false);
        PassResult r = new FindUnusedParametersPass().apply(net.main());
        assertSame(net.main(), r.program());
        assertEquals(List.of("every one of the 6 allreduced gradients is produced on every step"), r.notes());
    }
}
