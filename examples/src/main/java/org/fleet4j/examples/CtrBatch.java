package org.fleet4j.examples;

import org.fleet4j.core.data.CriteoReader;
import org.fleet4j.core.data.CriteoRow;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** Up to {@code size} Criteo rows as the {@link WideDeep} model's inputs: per slot a local-table row (or the raw id, see {@link CtrFeatures#RAW_IDS}), dense features, labels. */
final class CtrBatch {
    private final Tensor[] ids = new Tensor[CriteoRow.SPARSE];
    private final Tensor dense;
    private final Tensor labels;
    private final int[] labelValues;

    private CtrBatch(int rows) {
        this.labelValues = new int[rows];
        for (int s = 0; s < ids.length; s++) {
            ids[s] = Tensor.zeros(DType.I64, rows, 1);
        }
        dense = Tensor.zeros(DType.F32, rows, CriteoRow.DENSE);
        labels = Tensor.zeros(DType.I64, rows, 1);
    }

    /** The next up to {@code size} rows of {@code reader}, or null when it has none left. */
    static CtrBatch read(CriteoReader reader, CriteoRow row, int size, long vocab) {
        int[] labelBuffer = new int[size];
        long[][] rowIds = new long[CriteoRow.SPARSE][size];
        float[] denseValues = new float[size * CriteoRow.DENSE];
        int n = 0;
        while (n < size && reader.next(row)) {
            for (int s = 0; s < CriteoRow.SPARSE; s++) {
                rowIds[s][n] = CtrFeatures.localRow(row.sparse(s), row.sparseMissing(s), vocab);
            }
            for (int j = 0; j < CriteoRow.DENSE; j++) {
                denseValues[n * CriteoRow.DENSE + j] = CtrFeatures.dense(row.dense(j), row.denseMissing(j));
            }
            labelBuffer[n] = row.label();
            n++;
        }
        if (n == 0) {
            return null;
        }
        CtrBatch b = new CtrBatch(n);
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < CriteoRow.SPARSE; s++) {
                b.ids[s].setLong(i, rowIds[s][i]);
            }
            for (int j = 0; j < CriteoRow.DENSE; j++) {
                b.dense.setFloat((long) i * CriteoRow.DENSE + j, denseValues[i * CriteoRow.DENSE + j]);
            }
            b.labels.setLong(i, labelBuffer[i]);
            b.labelValues[i] = labelBuffer[i];
        }
        return b;
    }

    int rows() {
        return labelValues.length;
    }

    int label(int i) {
        return labelValues[i];
    }

    Tensor ids(int slot) {
        return ids[slot];
    }

    Tensor dense() {
        return dense;
    }

    Tensor labels() {
        return labels;
    }
}
