package org.fleet4j.pserver.compile;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The ctr program's Wide&amp;Deep in small (examples' WideDeep, which pserver cannot see): per slot a 1-wide and a
 * {@code dim}-wide is_sparse embedding, an MLP over the embeddings and dense features, wide + deep logit, logistic loss.
 */
public record SmallWideDeep(Program main, Program startup, List<Var> slots, Var dense, Var label, Var loss) {
    public static final int SLOTS = 3;
    public static final int DENSE = 4;

    public static SmallWideDeep build(long vocab, int dim, Optimizer optimizer) {
        Program main = new Program().setRandomSeed(7);
        Program startup = new Program().setRandomSeed(7);
        Layers nn = new Layers(main, startup);
        List<Var> slots = new ArrayList<>();
        List<Var> wide = new ArrayList<>();
        List<Var> deep = new ArrayList<>();
        for (int s = 0; s < SLOTS; s++) {
            Var ids = nn.data("C" + (s + 1), DType.I64, -1, 1);
            slots.add(ids);
            wide.add(nn.embedding(ids, vocab, 1, true));
            deep.add(nn.embedding(ids, vocab, dim, true));
        }
        Var dense = nn.data("dense", DType.F32, -1, DENSE);
        Var label = nn.data("label", DType.I64, -1, 1);
        deep.add(dense);
        Var h = nn.fc(nn.concat(deep, 1), 8, "relu");
        Var logit = nn.add(nn.fc(h, 1, null), nn.sum(wide));
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.concat(List.of(nn.scale(logit, 0f, 0f), logit), 1), label));
        optimizer.minimize(loss);
        return new SmallWideDeep(main, startup, List.copyOf(slots), dense, label, loss);
    }

    /** A seeded batch whose ids repeat within it (a few hot ids, as in click logs). */
    public Map<String, Tensor> batch(Random random, int size, long vocab) {
        Map<String, Tensor> feed = new HashMap<>();
        for (Var slot : slots) {
            long[] ids = new long[size];
            for (int i = 0; i < size; i++) {
                ids[i] = random.nextInt(4) == 0 ? random.nextInt(3) : random.nextLong(vocab);
            }
            feed.put(slot.name(), Tensor.ofLongs(ids, size, 1));
        }
        float[] d = new float[size * DENSE];
        for (int i = 0; i < d.length; i++) {
            d[i] = (float) random.nextGaussian();
        }
        feed.put(dense.name(), Tensor.of(d, size, DENSE));
        long[] labels = new long[size];
        for (int i = 0; i < size; i++) {
            labels[i] = random.nextInt(2);
        }
        feed.put(label.name(), Tensor.ofLongs(labels, size, 1));
        return feed;
    }
}
