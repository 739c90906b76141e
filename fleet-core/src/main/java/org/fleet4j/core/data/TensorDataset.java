package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

import java.util.List;
import java.util.SplittableRandom;

/** A dataset over tensors already in memory, e.g. random data for benchmarks. */
public record TensorDataset(List<String> fieldNames, List<Tensor> fields) implements Dataset {
    public TensorDataset {
        fieldNames = List.copyOf(fieldNames);
        fields = List.copyOf(fields);
        if (fields.isEmpty() || fields.size() != fieldNames.size()) {
            throw new IllegalArgumentException("a dataset needs at least one field and one name per field; got names "
                    + fieldNames + " for " + fields.size() + " tensors");
        }
        if (fieldNames.stream().distinct().count() != fieldNames.size()) {
            throw new IllegalArgumentException("field names must be distinct: " + fieldNames);
        }
        for (int i = 0; i < fields.size(); i++) {
            Tensor t = fields.get(i);
            if (t.rank() == 0) {
                throw new IllegalArgumentException("field '" + fieldNames.get(i) + "' is a scalar " + t.describe()
                        + "; a field needs a first dimension indexing the samples");
            }
            if (t.dim(0) != fields.getFirst().dim(0)) {
                throw new IllegalArgumentException("field '" + fieldNames.get(i) + "' is " + t.describe() + "; every field needs"
                        + " a first dimension of " + fields.getFirst().dim(0) + " rows like '" + fieldNames.getFirst() + "'");
            }
        }
        if (fields.getFirst().dim(0) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a dataset holds at most " + Integer.MAX_VALUE + " rows, not " + fields.getFirst().dim(0));
        }
    }

    /**
     * Synthetic classification data for benchmarks, the same for the same seed: field "x" float32 [rows, features]
     * uniform in [-1, 1), field "label" int64 [rows, 1] uniform in [0, classes).
     */
    public static TensorDataset randomClassification(long seed, int rows, int features, int classes) {
        if (rows < 1 || features < 1 || classes < 1) {
            throw new IllegalArgumentException("random classification data needs rows, features and classes >= 1; got "
                    + rows + ", " + features + ", " + classes);
        }
        SplittableRandom random = new SplittableRandom(seed);
        Tensor x = Tensor.zeros(DType.F32, rows, features);
        for (long i = 0; i < x.numel(); i++) {
            x.setFloat(i, (float) (2 * random.nextDouble() - 1));
        }
        Tensor label = Tensor.zeros(DType.I64, rows, 1);
        for (long i = 0; i < rows; i++) {
            label.setLong(i, random.nextInt(classes));
        }
        return new TensorDataset(List.of("x", "label"), List.of(x, label));
    }

    @Override
    public int size() {
        return (int) fields.getFirst().dim(0);
    }
}
