package org.fleet4j.core.models;

import java.util.Map;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * nanoGPT's GPT as three programs over one set of parameters: token and position embeddings, {@code n_layer} pre-norm
 * causal transformer blocks, a final layer norm and the language-model head tied to the token embedding (logits = x
 * wte^T), with the parameter names of nanoGPT's modules ({@code transformer.wte}, {@code transformer.h.0.attn.c_attn},
 * ..., {@code transformer.ln_f}), so that its state_dict loads by name ({@code TorchStateDict.byLayerNames}).
 *
 * <ul>
 * <li>{@code main}: ids and targets int64 [batch, block_size] to the mean cross entropy of every position (nats per
 * token), with dropout as configured; the program an optimizer minimizes.
 * <li>{@code eval}: the same loss with dropout off.
 * <li>{@code sampling}: ids to the logits [batch, block_size, vocab], dropout off; with causal attention the logits
 * at position t depend only on positions up to t, so a shorter context is fed padded on the right and read at its
 * last position.
 * </ul>
 * Every program takes sequences of exactly block_size; {@link #feed} and {@link #samplingFeed} refuse others naming
 * the sizes.
 */
public record GptModel(GptConfig config, Program main, Program startup, Program eval, Program sampling, Var ids,
                       Var targets, Var loss, Var evalLoss, Var logits) {
    public static final String TOKEN_EMBEDDING = "transformer.wte";
    public static final String POSITION_EMBEDDING = "transformer.wpe";

    /** Builds the three programs; {@code seed} seeds the initial weights (nanoGPT's normal(0, 0.02)) and dropout. */
    public static GptModel build(GptConfig config, long seed) {
        Program main = new Program().setRandomSeed(seed);
        Program startup = new Program().setRandomSeed(seed);
        Layers nn = new Layers(main, startup);
        Var ids = sequences(nn, "ids", config);
        Var targets = sequences(nn, "targets", config);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(forward(nn, ids, config, false), targets));

        Layers e = new Layers(new Program().setRandomSeed(seed), new Program());
        Var evalLoss = e.mean(e.softmaxWithCrossEntropy(forward(e, sequences(e, "ids", config), config, true),
                sequences(e, "targets", config)));

        Layers s = new Layers(new Program().setRandomSeed(seed), new Program());
        Var logits = forward(s, sequences(s, "ids", config), config, true);
        return new GptModel(config, main, startup, e.main(), s.main(), ids, targets, loss, evalLoss, logits);
    }

    private static Var sequences(Layers nn, String name, GptConfig c) {
        return nn.data(name, DType.I64, -1, c.blockSize());
    }

    /** The logits [batch, block_size, vocab] of ids [batch, block_size]. */
    private static Var forward(Layers nn, Var ids, GptConfig c, boolean isTest) {
        Var x = nn.add(nn.tokenEmbedding(ids, c.vocabSize(), c.nEmbd(), TOKEN_EMBEDDING, ParamAttr.DEFAULT),
                nn.positionEmbedding(c.blockSize(), c.blockSize(), c.nEmbd(), POSITION_EMBEDDING, ParamAttr.DEFAULT));
        if (c.dropout() > 0) {
            x = nn.dropout(x, c.dropout(), isTest);
        }
        for (int i = 0; i < c.nLayer(); i++) {
            x = nn.transformerBlock(x, c.nHead(), true, null, c.dropout(), isTest, "transformer.h." + i);
        }
        x = nn.layerNorm(x, "transformer.ln_f");
        // nanoGPT ties lm_head.weight to wte.weight: the head is the embedding table, transposed
        return nn.matmul(x, nn.main().globalBlock().var(TOKEN_EMBEDDING + ".w_0"), false, true, 1f);
    }

    /** The feed of {@code main} or {@code eval}: ids and targets int64 [batch, block_size], checked. */
    public Map<String, Tensor> feed(Tensor ids, Tensor targets) {
        check("ids", ids);
        check("targets", targets);
        if (ids.dim(0) != targets.dim(0)) {
            throw new IllegalArgumentException("GPT feed: ids have " + ids.dim(0) + " rows and targets " + targets.dim(0)
                    + "; give a target sequence for every sequence of ids");
        }
        return Map.of(this.ids.name(), ids, this.targets.name(), targets);
    }

    /** The feed of {@code sampling}: ids int64 [batch, block_size], checked. */
    public Map<String, Tensor> samplingFeed(Tensor ids) {
        check("ids", ids);
        return Map.of(this.ids.name(), ids);
    }

    private void check(String what, Tensor t) {
        int block = config.blockSize();
        if (t.dtype() != DType.I64 || t.rank() != 2) {
            throw new IllegalArgumentException("GPT feed: " + what + " " + t.describe() + " must be int64 [batch, "
                    + block + "]");
        }
        if (t.dim(1) > block) {
            throw new IllegalArgumentException("GPT feed: " + what + " " + t.describe() + " holds sequences of "
                    + t.dim(1) + " tokens, longer than block_size " + block + "; feed the last " + block + " tokens"
                    + " (or build the model with a larger block_size)");
        }
        if (t.dim(1) < block) {
            throw new IllegalArgumentException("GPT feed: " + what + " " + t.describe() + " holds sequences"
                    + " of " + t.dim(1) + " tokens; the programs take exactly block_size " + block + " (pad a shorter"
                    + " context on the right and read the logits at its last position)");
        }
    }
}
