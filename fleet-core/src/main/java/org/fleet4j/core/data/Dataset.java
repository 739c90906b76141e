package org.fleet4j.core.data;

import org.fleet4j.core.tensor.Tensor;

import java.util.List;

/**
 * A table of samples held in memory: named fields (e.g. "image", "label"), each a tensor whose first dimension
 * is the sample index. {@link DataLoader} batches any dataset by gathering rows of every field.
 */
public interface Dataset {
    /** Number of samples; every field has this many rows. */
    int size();

    /** The field names, in the order of {@link #fields()}. */
    List<String> fieldNames();

    /** The field tensors, each of shape [size(), ...]. */
    List<Tensor> fields();

    /** The field called {@code name}. */
    default Tensor field(String name) {
        int i = fieldNames().indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("dataset has no field '" + name + "'; its fields are " + fieldNames());
        }
        return fields().get(i);
    }
}
