package org.fleet4j.core.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.ProgramJson;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Initializer;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Per-parameter L2Decay and L1Decay, checked against one SGD step computed by hand. */
class RegularizerTest {
    private static final float[] X = {1, 2, 3, -1, 0.5f, 4};    // [2, 3]
    private static final float[] W = {0.5f, -0.25f, 0, 1, -2, 0.75f};  // [3, 2]; a zero, whose sign is 0
    private static final float LR = 0.1f;
    private static final float C = 0.2f;

    /** W and b after one SGD step on mean(x W + b), the weight decayed by {@code r} (null: none), the bias not. */
    private static float[][] oneStep(Regularizer r) {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 3);
        Var out = nn.fc(x, 2, null, ParamAttr.initializedBy(Initializer.values(W, 3, 2)).withRegularizer(r),
                ParamAttr.DEFAULT);
        new SGD(LR).minimize(nn.mean(out));
        Scope scope = new Scope();
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
            exe.run(nn.main(), scope, Map.of("x", Tensor.of(X, 2, 3)), List.of());
        }
        return new float[][]{scope.get("fc_0.w_0").toFloatArray(), scope.get("fc_0.b_0").toFloatArray()};
    }

    /** d mean(x W + b) / d W[i][j] = (sum over rows of x[n][i]) / (rows * columns). */
    private static float[] expectedWeight(boolean l1) {
        float[] w = new float[6];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++) {
                float grad = (X[i] + X[3 + i]) / 4;
                float p = W[i * 2 + j];
                float decay = l1 ? C * Math.signum(p) : C * p;
                w[i * 2 + j] = p - LR * (grad + decay);
            }
        }
        return w;
    }

    @Test
    void l2DecayAddsCoeffTimesTheParameterToItsGradient() {
        float[][] after = oneStep(Regularizer.l2Decay(C));
        assertArrayEquals(expectedWeight(false), after[0], 1e-6f);
        assertArrayEquals(new float[]{-LR * 0.5f, -LR * 0.5f}, after[1], 1e-7f, "the bias has no regularizer");
    }

    @Test
    void l1DecayAddsCoeffTimesTheSignOfTheParameter() {
        float[][] after = oneStep(Regularizer.l1Decay(C));
        assertArrayEquals(expectedWeight(true), after[0], 1e-6f);
        assertArrayEquals(new float[]{-LR * 0.5f, -LR * 0.5f}, after[1], 1e-7f);
    }

    /** The decay above is large enough to see: without it the step lands elsewhere. */
    @Test
    void withoutARegularizerTheStepDiffers() {
        float[] plain = oneStep(null)[0];
        float[] l2 = expectedWeight(false);
        float worst = 0;
        for (int i = 0; i < plain.length; i++) {
            worst = Math.max(worst, Math.abs(plain[i] - l2[i]));
        }
        assertTrue(worst > 0.03f, "largest difference " + worst);
    }

    @Test
    void decayOpsComeBeforeEveryUpdateAndWriteTheGradientInPlace() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 3);
        Var h = nn.fc(x, 4, "relu", ParamAttr.DEFAULT.withRegularizer(Regularizer.l1Decay(C)), ParamAttr.DEFAULT);
        Var out = nn.fc(h, 2, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(C)), ParamAttr.DEFAULT);
        new Momentum(0.1, 0.9f).minimize(nn.mean(out));
        List<Op> ops = nn.main().globalBlock().ops();
        List<String> types = ops.stream().map(Op::type).toList();
        int firstUpdate = types.indexOf("momentum");
        int lastDecay = -1;
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).type().equals("elementwise_add") && ops.get(i).out("Out").endsWith("@GRAD")) {
                assertEquals(ops.get(i).in("X"), ops.get(i).out("Out"), "in place");
                lastDecay = i;
            }
        }
        assertTrue(lastDecay > 0 && lastDecay < firstUpdate, types.toString());
        assertEquals(1, types.stream().filter("sign"::equals).count(), types.toString());
    }

    @Test
    void aProgramKeepsItsRegularizersThroughJsonAndCopies() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 3);
        nn.fc(x, 2, null, ParamAttr.named("w").withRegularizer(Regularizer.l1Decay(0.01f)), ParamAttr.DEFAULT);
        Program back = ProgramJson.fromJson(ProgramJson.toJson(nn.main()), "test");
        assertEquals(Regularizer.l1Decay(0.01f), back.globalBlock().var("w").regularizer());
        assertTrue(back.sameAs(nn.main()));
        assertEquals(Regularizer.l1Decay(0.01f), nn.main().copy().globalBlock().var("w").regularizer());
        assertTrue(nn.main().globalBlock().var("w").toString().endsWith("param L1Decay(0.01)"));
    }

    @Test
    void aSparseGradientIsRefusedNamingTheParameter() {
        Layers nn = new Layers(new Program(), new Program());
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var e = nn.embedding(ids, 10, 4, true, ParamAttr.named("emb").withRegularizer(Regularizer.l2Decay(C)));
        Var loss = nn.mean(e);
        IrException ex = assertThrows(IrException.class, () -> new SGD(0.1).minimize(loss));
        assertTrue(ex.getMessage().startsWith("parameter emb has the regularizer L2Decay(0.2), but its gradient"
                + " emb@GRAD is sparse"), ex.getMessage());
    }

    @Test
    void aNegativeOrNonFiniteCoefficientIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Regularizer.l2Decay(-1f));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Regularizer.l1Decay(Float.NaN));
        assertEquals("the coefficient of L1Decay must be a finite number >= 0, got NaN", e.getMessage());
    }
}
