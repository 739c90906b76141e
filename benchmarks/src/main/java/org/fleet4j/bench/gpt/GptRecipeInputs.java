package org.fleet4j.bench.gpt;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.fleet4j.core.data.TextCorpus;
import org.fleet4j.core.data.TextWindows;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;

/**
 * Writes what the gpt program trains and validates on, for a peer to use the same: {@code DIR/corpus.safetensors}
 * (int64 "train" and "validation", the character ids of the shipped names, as gpt splits them; "train_eval" and
 * "validation_eval", the starts of the windows gpt measures both losses on, all of the validation text's), and
 * {@code DIR/windows.txt}, STEPS lines of GLOBAL_BATCH random window starts (the batches gpt draws with that seed,
 * for gpt's --windows and the peer alike). Prints the vocabulary size.
 * <pre>
 *   GptRecipeInputs DIR STEPS GLOBAL_BATCH BLOCK_SIZE SEED
 * </pre>
 */
public final class GptRecipeInputs {
    private GptRecipeInputs() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 5) {
            System.err.println("usage: GptRecipeInputs DIR STEPS GLOBAL_BATCH BLOCK_SIZE SEED");
            System.exit(2);
        }
        Path dir = Files.createDirectories(Path.of(args[0]));
        int steps = Integer.parseInt(args[1]);
        int global = Integer.parseInt(args[2]);
        int block = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        TextCorpus names = TextCorpus.names();
        TextWindows train = new TextWindows(names.train(), block, "the training names");
        TextWindows validation = new TextWindows(names.validation(), block, "the validation names");
        long[] validationStarts = validation.sweepStarts(0);
        Map<String, Tensor> corpus = new LinkedHashMap<>();
        corpus.put("train", ids(names.train()));
        corpus.put("validation", ids(names.validation()));
        corpus.put("train_eval", Tensor.ofLongs(train.sweepStarts(validationStarts.length), validationStarts.length));
        corpus.put("validation_eval", Tensor.ofLongs(validationStarts, validationStarts.length));
        SafeTensors.write(dir.resolve("corpus.safetensors"), corpus, Map.of());
        StringBuilder lines = new StringBuilder();
        for (int s = 0; s < steps; s++) {
            for (long start : train.randomStarts(seed, s, global)) {
                lines.append(start).append(' ');
            }
            lines.append('\n');
        }
        Files.writeString(dir.resolve("windows.txt"), lines);
        System.out.println(names.vocabulary().size());
    }

    private static Tensor ids(int[] text) {
        long[] v = new long[text.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = text[i];
        }
        return Tensor.ofLongs(v, v.length);
    }
}
