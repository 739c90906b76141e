package org.fleet4j.core.data;

import org.fleet4j.core.tensor.Tensor;

import java.util.List;

/**
 * One rank's share of one step: the gathered rows of every dataset field. The tensors live in the loader's
 * preallocated buffers, so a batch is valid only until the loader's iterator is advanced again.
 */
public final class Batch {
    private final List<String> names;
    private final Tensor[] fields;
    private final int[] order;
    private int firstPosition;
    private int step;

    Batch(List<String> names, Tensor[] fields, int[] order) {
        this.names = names;
        this.fields = fields;
        this.order = order;
    }

    void moveTo(int step, int firstPosition) {
        this.step = step;
        this.firstPosition = firstPosition;
    }

    /** Rows in this rank's share (all fields have this many). */
    public int size() {
        return (int) fields[0].dim(0);
    }

    /** The step within the epoch, from 0. */
    public int step() {
        return step;
    }

    public Tensor field(int i) {
        return fields[i];
    }

    public Tensor field(String name) {
        int i = names.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("batch has no field '" + name + "'; its fields are " + names);
        }
        return fields[i];
    }

    /** The dataset row that row {@code row} of this batch was copied from. */
    public int sampleIndex(int row) {
        if (row < 0 || row >= size()) {
            throw new IndexOutOfBoundsException("row " + row + " of a batch of " + size());
        }
        return order[firstPosition + row];
    }
}
