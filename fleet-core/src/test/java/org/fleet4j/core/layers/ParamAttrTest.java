package org.fleet4j.core.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.ModelState;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

class ParamAttrTest {
    /** The default names users find in checkpoints; changing them breaks every saved model, so they are pinned. */
    @Test
    void defaultNamesFollowTheDocumentedRule() {
        Layers nn = new Layers(new Program(), new Program());
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var e = nn.embedding(ids, 10, 4, false);
        Var e2 = nn.embedding(ids, 10, 4, false);
        Var h = nn.fc(nn.concat(List.of(e, e2, x), 1), 16, "relu");
        h = nn.batchNorm(nn.batchNorm(h, true), true);
        nn.fc(h, 4, null);
        assertEquals(List.of("embedding_0.w_0", "embedding_1.w_0", "fc_0.w_0", "fc_0.b_0",
                "batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2",
                "batch_norm_1.w_0", "batch_norm_1.b_0", "batch_norm_1.w_1", "batch_norm_1.w_2",
                "fc_1.w_0", "fc_1.b_0"), ModelState.names(nn.main()));
    }

    @Test
    void namedLayersTakeTheirNamesAndNoNumber() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 8);
        Var h = nn.fc(x, 16, "relu", ParamAttr.named("fc1.weight"), ParamAttr.named("fc1.bias"));
        h = nn.batchNorm(h, true, 0.9f, 1e-5f, ParamAttr.named("bn.weight"), ParamAttr.named("bn.bias"),
                "bn.running_mean", "bn.running_var");
        nn.fc(h, 4, null);
        nn.fc(h, 4, null, ParamAttr.named("head.weight"), ParamAttr.DEFAULT);
        assertEquals(List.of("fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
                "fc_0.w_0", "fc_0.b_0", "head.weight", "fc_1.b_0"), ModelState.names(nn.main()));
    }

    @Test
    void aLayerNameNamesItsParametersAndExplicitNamesWin() {
        Layers nn = new Layers(new Program(), new Program());
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var x = nn.data("x", DType.F32, -1, 8);
        Var e = nn.embedding(ids, 10, 4, false, "emb");
        Var h = nn.fc(nn.concat(List.of(e, x), 1), 16, "relu", "hidden");
        h = nn.batchNorm(h, true, 0.9f, 1e-5f, "bn");
        h = nn.fc(h, 8, null);
        nn.fc(h, 4, null, "head", ParamAttr.named("head.weight"), ParamAttr.DEFAULT);
        nn.batchNorm(h, true, 0.9f, 1e-5f, "bn2", ParamAttr.DEFAULT, ParamAttr.named("bn2.beta"), "bn2.mean", null);
        assertEquals(List.of("emb.w_0", "hidden.w_0", "hidden.b_0", "bn.w_0", "bn.b_0", "bn.w_1", "bn.w_2",
                "fc_0.w_0", "fc_0.b_0", "head.weight", "head.b_0", "bn2.w_0", "bn2.beta", "bn2.mean", "bn2.w_2"),
                ModelState.names(nn.main()));
        IrException twice = assertThrows(IrException.class, () -> nn.fc(x, 2, null, "hidden"));
        assertTrue(twice.getMessage().contains("'hidden.w_0' is already used"), twice.getMessage());
        IllegalArgumentException blank = assertThrows(IllegalArgumentException.class, () -> nn.fc(x, 2, null, " "));
        assertEquals("a fc layer's name must not be blank; pass null for the default names", blank.getMessage());
    }

    @Test
    void aFrozenParameterGetsNoGradient() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 8);
        Var out = nn.fc(x, 4, null, ParamAttr.named("w").frozen(), ParamAttr.DEFAULT);
        List<ParamGrad> grads = Backward.appendBackward(nn.mean(out));
        assertEquals(Set.of("fc_0.b_0"), Set.copyOf(grads.stream().map(ParamGrad::param).toList()));
        assertTrue(nn.main().globalBlock().var("w").isParameter());
    }

    @Test
    void aNameUsedTwiceIsRefusedNamingIt() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 8);
        nn.fc(x, 4, null, ParamAttr.named("w"), ParamAttr.DEFAULT);
        IrException e = assertThrows(IrException.class, () -> nn.fc(x, 4, null, ParamAttr.named("w"), ParamAttr.DEFAULT));
        assertTrue(e.getMessage().contains("'w' is already used"), e.getMessage());
    }

    @Test
    void givenValuesInitialiseTheParameterExactly() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 2);
        float[] w = {0.1f, -0.2f, 0.3f, 1e-7f, 5f, -6f};
        nn.fc(x, 3, null, ParamAttr.initializedBy(Initializer.values(w, 2, 3)),
                ParamAttr.initializedBy(Initializer.values(new float[]{1, 2, 3}, 3)));
        Scope scope = new Scope();
        try (Executor exe = new Executor()) {
            exe.run(nn.startup(), scope);
        }
        assertArrayEquals(w, scope.find("fc_0.w_0").toFloatArray());
        assertArrayEquals(new float[]{1, 2, 3}, scope.find("fc_0.b_0").toFloatArray());
    }

    @Test
    void givenValuesOfAnotherShapeAreRefusedNamingTheParameter() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 2);
        Initializer wrong = Initializer.values(new float[6], 3, 2);
        IrException e = assertThrows(IrException.class,
                () -> nn.fc(x, 3, null, ParamAttr.initializedBy(wrong), ParamAttr.DEFAULT));
        assertEquals("parameter fc_0.w_0: the initializer's values have shape [3, 2], the parameter has [2, 3]"
                + " (fc weights are [in, out])", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Initializer.values(new float[5], 2, 3));
    }
}
