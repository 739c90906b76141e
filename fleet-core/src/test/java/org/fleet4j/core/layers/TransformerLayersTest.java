package org.fleet4j.core.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.ModelState;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** A small GPT built as docs/TRANSFORMER.md shows: its parameter names, a training step, and the refusals. */
class TransformerLayersTest {
    private static final int VOCAB = 11;
    private static final int SEQ = 6;
    private static final int WIDTH = 8;

    private static Layers gpt(long seq, int heads) {
        Layers nn = new Layers(new Program().setRandomSeed(3), new Program());
        Var ids = nn.data("ids", DType.I64, -1, seq);
        Var x = nn.add(nn.tokenEmbedding(ids, VOCAB, WIDTH, "transformer.wte", ParamAttr.DEFAULT),
                nn.positionEmbedding(seq, SEQ, WIDTH, "transformer.wpe", ParamAttr.DEFAULT));
        for (int i = 0; i < 2; i++) {
            x = nn.transformerBlock(x, heads, true, null, 0.1f, false, "transformer.h." + i);
        }
        x = nn.layerNorm(x, "transformer.ln_f");
        Var logits = nn.fc(x, VOCAB, 2, null, "lm_head", ParamAttr.DEFAULT, ParamAttr.DEFAULT);
        Var targets = nn.data("targets", DType.I64, -1, seq);
        nn.mean(nn.softmaxWithCrossEntropy(logits, targets, -100, 0.1f));
        return nn;
    }

    @Test
    void aSmallGptHasNanoGptsNamesAndTrains() {
        Layers nn = gpt(SEQ, 2);
        List<String> names = ModelState.names(nn.main());
        assertEquals(List.of("transformer.wte.w_0", "transformer.wpe.w_0", "transformer.h.0.ln_1.w_0",
                "transformer.h.0.ln_1.b_0", "transformer.h.0.attn.c_attn.w_0", "transformer.h.0.attn.c_attn.b_0",
                "transformer.h.0.attn.c_proj.w_0", "transformer.h.0.attn.c_proj.b_0", "transformer.h.0.ln_2.w_0",
                "transformer.h.0.ln_2.b_0", "transformer.h.0.mlp.c_fc.w_0", "transformer.h.0.mlp.c_fc.b_0",
                "transformer.h.0.mlp.c_proj.w_0", "transformer.h.0.mlp.c_proj.b_0"), names.subList(0, 14));
        assertEquals(List.of("lm_head.w_0", "lm_head.b_0"), names.subList(names.size() - 2, names.size()));
        Var loss = nn.main().globalBlock().var(nn.main().globalBlock().ops().getLast().out("Out"));
        new AdamW(LrSchedule.warmupCosine(0.01, 2, 10, 0, 0), 0.9f, 0.95f, 1e-8f, 0.1f, AdamW.notBiasOrNorm())
                .withGradClip(new ClipGradByGlobalNorm(1f)).minimize(loss);
        long[] ids = new long[3 * SEQ];
        long[] targets = new long[3 * SEQ];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = (i * 7) % VOCAB;
            targets[i] = (i * 7 + 1) % VOCAB;
        }
        Map<String, Tensor> feed = Map.of("ids", Tensor.ofLongs(ids, 3, SEQ), "targets", Tensor.ofLongs(targets, 3, SEQ));
        try (Executor exe = new Executor()) {
            Scope scope = new Scope();
            exe.run(nn.startup(), scope);
            float first = exe.run(nn.main(), scope, feed, List.of(loss.name())).get(loss.name()).getFloat(0);
            float last = first;
            for (int step = 0; step < 8; step++) {
                last = exe.run(nn.main(), scope, feed, List.of(loss.name())).get(loss.name()).getFloat(0);
            }
            assertTrue(Float.isFinite(first) && last < first, "the loss falls on a repeated batch: " + first + " -> " + last);
            assertNotEquals(0f, scope.find("transformer.h.1.attn.c_attn.w_0").getFloat(0));
        }
    }

    @Test
    void aSequenceLongerThanTheBlockAndHeadsThatDoNotDivideAreRefused() {
        var e = assertThrows(IrException.class, () -> gpt(SEQ + 2, 2));
        assertEquals("position embedding transformer.wpe: a sequence of 8 positions does not fit block_size 6; use"
                + " sequences of 1..6 tokens or a larger block_size", e.getMessage());
        e = assertThrows(IrException.class, () -> gpt(SEQ, 3));
        assertEquals("multiHeadAttention transformer.h.0.attn: 3 heads do not divide the width 8; choose n_head dividing"
                + " n_embd", e.getMessage());
    }
}
