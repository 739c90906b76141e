package org.fleet4j.core.models;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Text from a {@link GptModel}: a loop of forward passes of its sampling program over a growing context, every sample
 * drawn at once as one row of the batch. Each new token is drawn from the softmax of the last position's logits
 * divided by the temperature, among the {@code topK} likeliest (all at 0), by a seeded generator; a context longer
 * than block_size is cropped to its last block_size tokens, as nanoGPT's generate does.
 */
public final class GptSampler {
    private final GptModel model;
    private final ProgramRunner runner;
    private final Scope scope;

    /** Samples with the parameters in {@code scope}, running the sampling program on {@code runner}. */
    public GptSampler(GptModel model, ProgramRunner runner, Scope scope) {
        this.model = model;
        this.runner = runner;
        this.scope = scope;
    }

    /**
     * {@code n} continuations of {@code context}, each ended by {@code stopId} (which it does not include) or after
     * {@code maxNew} tokens ({@code stopId} -1: always {@code maxNew}). The context must fit block_size; temperature is positive; topK is 0 (every token) or
     * 1..vocab_size.
     */
    public List<int[]> sample(int[] context, int n, int maxNew, int stopId, double temperature, int topK, long seed) {
        int block = model.config().blockSize();
        int vocab = model.config().vocabSize();
        if (context.length < 1 || context.length > block) {
            throw new IllegalArgumentException("GPT sampling: a context of " + context.length + " tokens does not fit"
                    + " block_size " + block + "; give 1.." + block + " tokens");
        }
        if (!(temperature > 0) || !Double.isFinite(temperature)) {
            throw new IllegalArgumentException("GPT sampling: the temperature must be a positive number, got " + temperature);
        }
        if (topK < 0 || topK > vocab) {
            throw new IllegalArgumentException("GPT sampling: top_k must be 0 (every token) or 1.." + vocab + ", got " + topK);
        }
        List<List<Integer>> drawn = new ArrayList<>();
        boolean[] done = new boolean[n];
        for (int r = 0; r < n; r++) {
            drawn.add(new ArrayList<>());
        }
        int length = context.length;
        SplittableRandom random = new SplittableRandom(seed);
        Tensor ids = Tensor.zeros(DType.I64, n, block);
        int[][] rows = new int[n][];
        for (int r = 0; r < n; r++) {
            rows[r] = Arrays.copyOf(context, context.length + maxNew);
        }
        double[] p = new double[vocab];
        for (int step = 0; step < maxNew && !allTrue(done); step++) {
            int from = Math.max(0, length - block);
            int window = length - from;
            for (int r = 0; r < n; r++) {
                for (int t = 0; t < block; t++) {
                    ids.setLong((long) r * block + t, t < window ? rows[r][from + t] : 0);
                }
            }
            Tensor logits = runner.run(model.sampling(), scope, model.samplingFeed(ids), List.of(model.logits().name()))
                    .get(model.logits().name());
            for (int r = 0; r < n; r++) {
                if (done[r]) {
                    continue;
                }
                long at = ((long) r * block + window - 1) * vocab;
                int next = draw(logits, at, vocab, temperature, topK, p, random);
                rows[r][length] = next;
                if (next == stopId) {
                    done[r] = true;
                } else {
                    drawn.get(r).add(next);
                }
            }
            length++;
        }
        return drawn.stream().map(d -> d.stream().mapToInt(Integer::intValue).toArray()).toList();
    }

    private static int draw(Tensor logits, long at, int vocab, double temperature, int topK, double[] p,
                            SplittableRandom random) {
        double threshold = Double.NEGATIVE_INFINITY;
        if (topK > 0 && topK < vocab) {
            double[] sorted = new double[vocab];
            for (int v = 0; v < vocab; v++) {
                sorted[v] = logits.getFloat(at + v);
            }
            Arrays.sort(sorted);
            threshold = sorted[vocab - topK];
        }
        double max = Double.NEGATIVE_INFINITY;
        for (int v = 0; v < vocab; v++) {
            max = Math.max(max, logits.getFloat(at + v));
        }
        double sum = 0;
        for (int v = 0; v < vocab; v++) {
            double l = logits.getFloat(at + v);
            p[v] = l < threshold ? 0 : Math.exp((l - max) / temperature);
            sum += p[v];
        }
        double u = random.nextDouble() * sum;
        for (int v = 0; v < vocab; v++) {
            u -= p[v];
            if (u < 0) {
                return v;
            }
        }
        for (int v = vocab - 1; ; v--) {
            if (p[v] > 0) {
                return v; // what rounding left of u
            }
        }
    }

    private static boolean allTrue(boolean[] a) {
        for (boolean b : a) {
            if (!b) {
                return false;
            }
        }
        return true;
    }
}
