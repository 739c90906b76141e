package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.ScaleStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;

/** What minimize appends to the programs, per world size and scale strategy (no processes needed). */
class DistributedOptimizerTest {
    private static Var model() {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 3);
        Var y = nn.data("y", DType.I64, -1, 1);
        return nn.mean(nn.softmaxWithCrossEntropy(nn.fc(x, 2, null), y));
    }

    private static CollectiveOptimizer optimizer(DistributedStrategy strategy, int world) {
        EffectiveStrategy effective = EffectiveStrategy.resolve(strategy, new World(1, world, "cpu"));
        return new CollectiveOptimizer(new SGD(0.1), effective, RingLayout.of(effective), world, 0, false,
                new PrintStream(OutputStream.nullOutputStream()));
    }

    private static List<Op> ops(Program p, String type) {
        return p.globalBlock().ops().stream().filter(op -> op.type().equals(type)).toList();
    }

    @Test
    void allreducesEveryGradientBeforeTheUpdatesAndBroadcastsEveryParameter() {
        Var loss = model();
        Program main = loss.block().program();
        // unfused, to see the ops minimize inserts; the compiler's bucketing is tested in ops-fusion
        List<ParamGrad> grads = optimizer(new DistributedStrategy().fuseAllReduceOps(false), 2).minimize(loss);

        List<Op> allreduces = ops(main, "c_allreduce");
        assertEquals(grads.stream().map(ParamGrad::grad).toList(), allreduces.stream().map(op -> op.in("X")).toList());
        for (Op op : allreduces) {
            assertEquals(op.in("X"), op.out("Out"));
            assertEquals("avg", op.stringAttr("reduce"));
            assertEquals(0, op.intAttr("ring_id"));
        }
        List<String> types = main.globalBlock().ops().stream().map(Op::type).toList();
        assertTrue(types.lastIndexOf("c_allreduce") < types.indexOf("sgd"), "allreduce before the updates: " + types);
        int lastGradOp = 0;
        for (int i = 0; i < types.size(); i++) {
            lastGradOp = types.get(i).endsWith("_grad") ? i : lastGradOp;
        }
        assertTrue(lastGradOp > 0 && types.indexOf("c_allreduce") > lastGradOp, "allreduce after backward: " + types);
        List<Op> broadcasts = ops(main.startupProgram(), "c_broadcast");
        assertEquals(grads.stream().map(ParamGrad::param).toList(), broadcasts.stream().map(op -> op.in("X")).toList());
        broadcasts.forEach(op -> assertEquals(0, op.intAttr("root")));
    }

    /** As Paddle's Fleet: the decay is added to the averaged gradient, so every rank adds it once. */
    @Test
    void aRegularizersDecayComesAfterTheAllreduceOfItsGradient() {
        Layers nn = new Layers(new Program().setRandomSeed(1), new Program().setRandomSeed(1));
        Var x = nn.data("x", DType.F32, -1, 3);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var logits = nn.fc(x, 2, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(0.01f)), ParamAttr.DEFAULT);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        optimizer(new DistributedStrategy().fuseAllReduceOps(false), 2).minimize(loss);
        List<Op> all = nn.main().globalBlock().ops();
        int allreduce = all.indexOf(ops(nn.main(), "c_allreduce").stream()
                .filter(op -> op.in("X").equals("fc_0.w_0@GRAD")).findFirst().orElseThrow());
        int decay = -1;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).type().equals("elementwise_add") && all.get(i).out("Out").equals("fc_0.w_0@GRAD")) {
                decay = i;
            }
        }
        int update = all.indexOf(ops(nn.main(), "sgd").getFirst());
        assertTrue(allreduce < decay && decay < update, "allreduce #" + allreduce + ", decay #" + decay + ", sgd #" + update);
    }

    @Test
    void sumScaleStrategyAllreducesWithSum() {
        Var loss = model();
        DistributedStrategy strategy = new DistributedStrategy().gradientScaleConfigs(c -> c.scaleStrategy(ScaleStrategy.SUM));
        CollectiveOptimizer opt = optimizer(strategy, 2);
        opt.minimize(loss);
        assertEquals("sum", opt.scaleStrategy());
        ops(loss.block().program(), "c_allreduce").forEach(op -> assertEquals("sum", op.stringAttr("reduce")));
    }

    @Test
    void aWorldOfOneInsertsNothing() {
        Var loss = model();
        Program main = loss.block().program();
        optimizer(new DistributedStrategy(), 1).minimize(loss);
        assertEquals(List.of(), ops(main, "c_allreduce"));
        assertEquals(List.of(), ops(main.startupProgram(), "c_broadcast"));
        assertEquals(2, ops(main, "sgd").size(), "the updates of weight and bias are still there");
    }

    @Test
    void allreduceRejectsAnUnknownReduction() {
        Var loss = model();
        IrException e = assertThrows(IrException.class, () -> loss.block().appendOp("c_allreduce",
                Map.of("X", List.of(loss.name())), Map.of("Out", List.of(loss.name())), Map.of("reduce", "max")));
        assertTrue(e.getMessage().contains("attribute 'reduce' is 'max'; expected sum or avg"), e.getMessage());
    }
}
