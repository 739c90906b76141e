package org.fleet4j.core.models;

/**
 * The shape of a {@link GptModel}, in nanoGPT's words: a vocabulary of {@code vocabSize} tokens, contexts of
 * {@code blockSize}, {@code nLayer} transformer blocks of {@code nHead} heads over {@code nEmbd} channels, and dropout
 * of probability {@code dropout} (0 for none). That the heads divide the channels is checked by the attention layer,
 * which names itself.
 */
public record GptConfig(int vocabSize, int blockSize, int nLayer, int nHead, int nEmbd, float dropout) {
    public GptConfig {
        check("vocab_size", vocabSize, 2);
        check("block_size", blockSize, 1);
        check("n_layer", nLayer, 1);
        check("n_head", nHead, 1);
        check("n_embd", nEmbd, 1);
        if (!(dropout >= 0f && dropout < 1f)) {
            throw new IllegalArgumentException("dropout must be in [0, 1), got " + dropout);
        }
    }

    private static void check(String name, int value, int least) {
        if (value < least) {
            throw new IllegalArgumentException(name + " must be at least " + least + ", got " + value);
        }
    }
}
