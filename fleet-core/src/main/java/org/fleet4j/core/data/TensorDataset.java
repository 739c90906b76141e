package org.fleet4j.core.data;

import org.fleet4j.core.tensor.Tensor;

import java.util.List;

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
            if (t.rank() == 0 || t.dim(0) != fields.getFirst().dim(0)) {
                throw new IllegalArgumentException("field '" + fieldNames.get(i) + "' is " + t.describe() + "; every field needs"
                        + " a first dimension of " + fields.getFirst().dim(0) + " rows like '" + fieldNames.getFirst() + "'");
            }
        }
        if (fields.getFirst().dim(0) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a dataset holds at most " + Integer.MAX_VALUE + " rows, not " + fields.getFirst().dim(0));
        }
    }

    @Override
    public int size() {
        return (int) fields.getFirst().dim(0);
    }
}
