package org.fleet4j.examples;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.data.CriteoRow;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Wide&amp;Deep for click-through rate on Criteo rows: the wide part sums a learned weight per categorical id (a
 * 1-wide embedding per slot); the deep part is an MLP over the 26 slots' embeddings and the 13 log-scaled integer
 * features. Every embedding is an {@code is_sparse} {@code lookup_table}, so its gradient holds only the rows a batch
 * touched, and these lookups are the ops a parameter-server compile step turns into pull_sparse/push_sparse.
 * The loss is the logistic loss of the logit, written as 2-class softmax cross entropy over [0, logit].
 */
record WideDeep(Program main, Program startup, Program test, List<Var> slots, Var dense, Var label, Var logit, Var loss) {

    static WideDeep build(int embeddingDim, long vocab, int[] hidden, long seed) {
        Program main = new Program().setRandomSeed(seed);
        Program startup = new Program().setRandomSeed(seed);
        Layers nn = new Layers(main, startup);
        List<Var> slots = new ArrayList<>();
        List<Var> wide = new ArrayList<>();
        List<Var> deepIn = new ArrayList<>();
        for (int s = 0; s < CriteoRow.SPARSE; s++) {
            Var ids = nn.data("C" + (s + 1), DType.I64, -1, 1);
            slots.add(ids);
            wide.add(nn.embedding(ids, vocab, 1, true));
            deepIn.add(nn.embedding(ids, vocab, embeddingDim, true));
        }
        Var dense = nn.data("dense", DType.F32, -1, CriteoRow.DENSE);
        Var label = nn.data("label", DType.I64, -1, 1);
        deepIn.add(dense);
        Var h = nn.concat(deepIn, 1);
        for (int width : hidden) {
            h = nn.fc(h, width, "relu");
        }
        Var logit = nn.add(nn.fc(h, 1, null), nn.sum(wide));
        Var twoClass = nn.concat(List.of(nn.scale(logit, 0f, 0f), logit), 1);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(twoClass, label));
        return new WideDeep(main, startup, main.copy(), List.copyOf(slots), dense, label, logit, loss);
    }

    Map<String, Tensor> feed(CtrBatch batch) {
        Map<String, Tensor> feed = new HashMap<>();
        for (int s = 0; s < slots.size(); s++) {
            feed.put(slots.get(s).name(), batch.ids(s));
        }
        feed.put(dense.name(), batch.dense());
        feed.put(label.name(), batch.labels());
        return feed;
    }
}
