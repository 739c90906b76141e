package org.fleet4j.core.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The GPT's programs: nanoGPT's parameter names with the head tied to the token embedding, causal logits (what the
 * sampler's right padding relies on), feeds of exactly block_size, and the sampler: seeded, greedy at top_k 1,
 * cropping a context that outgrows the block.
 */
class GptModelTest {
    private static final GptConfig CONFIG = new GptConfig(11, 8, 2, 2, 16, 0f);

    private GptModel model;
    private CpuProgramRunner runner;
    private Scope scope;

    @BeforeEach
    void build() {
        model = GptModel.build(CONFIG, 3);
        runner = new CpuProgramRunner(new Executor());
        scope = new Scope();
        runner.run(model.startup(), scope);
    }

    @Test
    void itHasNanoGptsParametersAndTheHeadIsTheTokenEmbedding() {
        List<String> names = model.main().globalBlock().vars().stream().filter(Var::isParameter).map(Var::name).toList();
        List<String> expected = new ArrayList<>(List.of("transformer.wte.w_0", "transformer.wpe.w_0"));
        for (int i = 0; i < 2; i++) {
            for (String p : List.of("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")) {
                expected.add("transformer.h." + i + "." + p + ".w_0");
                expected.add("transformer.h." + i + "." + p + ".b_0");
            }
        }
        expected.addAll(List.of("transformer.ln_f.w_0", "transformer.ln_f.b_0"));
        assertEquals(expected.stream().sorted().toList(), names.stream().sorted().toList());
        for (var program : List.of(model.eval(), model.sampling())) {
            assertEquals(names.stream().sorted().toList(), program.globalBlock().vars().stream().filter(Var::isParameter)
                    .map(Var::name).sorted().toList(), "every program reads the same parameters");
        }
        assertArrayEquals(new long[]{-1, 8, 11}, model.logits().shape());
    }

    @Test
    void theLogitsAtAPositionDoNotDependOnLaterTokens() {
        SplittableRandom r = new SplittableRandom(1);
        long[] a = new long[3 * 8];
        for (int i = 0; i < a.length; i++) {
            a[i] = r.nextInt(11);
        }
        long[] b = a.clone();
        for (int row = 0; row < 3; row++) {
            for (int t = 5; t < 8; t++) {
                b[row * 8 + t] = (b[row * 8 + t] + 1 + t) % 11;
            }
        }
        float[] la = logits(a);
        float[] lb = logits(b);
        for (int row = 0; row < 3; row++) {
            for (int t = 0; t < 8; t++) {
                float[] pa = Arrays.copyOfRange(la, (row * 8 + t) * 11, (row * 8 + t + 1) * 11);
                float[] pb = Arrays.copyOfRange(lb, (row * 8 + t) * 11, (row * 8 + t + 1) * 11);
                if (t < 5) {
                    assertArrayEquals(pa, pb, "row " + row + " position " + t + " saw a later token");
                } else {
                    assertNotEquals(Arrays.toString(pa), Arrays.toString(pb), "position " + t + " sees its own token");
                }
            }
        }
    }

    @Test
    void theLossStartsNearLnVocabAndTheEvaluationProgramAgreesWithoutDropout() {
        long[] ids = new long[4 * 8];
        long[] targets = new long[4 * 8];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i % 11;
            targets[i] = (i + 1) % 11;
        }
        Tensor x = Tensor.ofLongs(ids, 4, 8);
        Tensor y = Tensor.ofLongs(targets, 4, 8);
        float eval = runner.run(model.eval(), scope, model.feed(x, y), List.of(model.evalLoss().name()))
                .get(model.evalLoss().name()).getFloat(0);
        assertEquals(Math.log(11), eval, 0.05, "normal(0, 0.02) weights predict nearly uniformly");
        float train = runner.run(model.main(), scope, model.feed(x, y), List.of(model.loss().name()))
                .get(model.loss().name()).getFloat(0);
        assertEquals(eval, train, "the same forward pass");
    }

    @Test
    void feedsOfAnotherLengthThanTheBlockAreRefusedNamingBoth() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> model.samplingFeed(Tensor.zeros(DType.I64, 2, 9)));
        assertEquals("GPT feed: ids int64[2, 9] holds sequences of 9 tokens, longer than block_size 8; feed the last 8"
                + " tokens (or build the model with a larger block_size)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> model.feed(Tensor.zeros(DType.I64, 2, 8),
                Tensor.zeros(DType.I64, 2, 5)));
        assertTrue(e.getMessage().startsWith("GPT feed: targets int64[2, 5] holds sequences of 5 tokens; the programs take"
                + " exactly block_size 8"), e.getMessage());
        IrException heads = assertThrows(IrException.class, () -> GptModel.build(new GptConfig(11, 8, 1, 3, 16, 0f), 1));
        assertEquals("multiHeadAttention transformer.h.0.attn: 3 heads do not divide the width 16; choose n_head"
                + " dividing n_embd", heads.getMessage());
    }

    @Test
    void samplingIsSeededGreedyAtTopKOneAndCropsAContextThatOutgrowsTheBlock() {
        GptSampler sampler = new GptSampler(model, runner, scope);
        int[] context = {0, 3};
        List<int[]> first = sampler.sample(context, 4, 20, -1, 1.0, 0, 7);
        List<int[]> again = sampler.sample(context, 4, 20, -1, 1.0, 0, 7);
        for (int i = 0; i < 4; i++) {
            assertArrayEquals(first.get(i), again.get(i));
            assertEquals(20, first.get(i).length, "no stop token: all 20, past the block of 8");
        }
        assertNotEquals(Arrays.toString(first.get(0)), Arrays.toString(sampler.sample(context, 4, 20, -1, 1.0, 0, 8).get(0)));

        int[] greedy = sampler.sample(context, 2, 12, -1, 1.0, 1, 7).get(0);
        List<Integer> tokens = new ArrayList<>(List.of(0, 3));
        for (int step = 0; step < 12; step++) {
            int from = Math.max(0, tokens.size() - 8);
            long[] ids = new long[8];
            for (int t = from; t < tokens.size(); t++) {
                ids[t - from] = tokens.get(t);
            }
            float[] l = logits(ids);
            int last = tokens.size() - from - 1;
            int best = 0;
            for (int v = 1; v < 11; v++) {
                if (l[last * 11 + v] > l[last * 11 + best]) {
                    best = v;
                }
            }
            assertEquals(best, greedy[step], "step " + step + ": top_k 1 takes the likeliest token");
            tokens.add(best);
        }
        int[] stopped = sampler.sample(context, 1, 12, greedy[2], 1.0, 1, 7).get(0);
        assertArrayEquals(Arrays.copyOf(greedy, 2), stopped, "the stop token ends a sample and is not part of it");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> sampler.sample(new int[9], 1, 1, -1, 1.0, 0, 1));
        assertEquals("GPT sampling: a context of 9 tokens does not fit block_size 8; give 1..8 tokens", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> sampler.sample(context, 1, 1, -1, 1.0, 12, 1));
        assertThrows(IllegalArgumentException.class, () -> sampler.sample(context, 1, 1, -1, 0.0, 0, 1));
    }

    private float[] logits(long[] ids) {
        Tensor t = Tensor.ofLongs(ids, ids.length / 8, 8);
        return runner.run(model.sampling(), scope, model.samplingFeed(t), List.of(model.logits().name()))
                .get(model.logits().name()).toFloatArray();
    }
}
