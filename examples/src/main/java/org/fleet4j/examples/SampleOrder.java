package org.fleet4j.examples;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.data.Dataset;
import org.fleet4j.core.data.TensorDataset;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.text.Quoted;

/**
 * {@code --sample_order FILE}: the training samples in the order a file lists them (indices from 0, separated by
 * white space; a sample may come more than once), gathered into a dataset of their own that a loader reads without
 * shuffling, so that global batch k is the file's samples k b .. (k + 1) b - 1.
 */
final class SampleOrder {
    private SampleOrder() {
    }

    /** The samples of {@code data} that {@code file} lists, in its order. */
    static Dataset of(Path file, Dataset data) {
        int[] order = read(file, data.size());
        List<Tensor> fields = new ArrayList<>();
        for (Tensor src : data.fields()) {
            long[] shape = src.shape();
            shape[0] = order.length;
            Tensor dst = Tensor.zeros(src.dtype(), shape);
            long rowBytes = src.byteSize() / data.size();
            for (int i = 0; i < order.length; i++) {
                MemorySegment.copy(src.segment(), order[i] * rowBytes, dst.segment(), i * rowBytes, rowBytes);
            }
            fields.add(dst);
        }
        return new TensorDataset(data.fieldNames(), fields);
    }

    private static int[] read(Path file, int size) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("--sample_order " + file + " cannot be read (" + e + "); name a text file"
                    + " of sample indices", e);
        }
        String[] tokens = text.strip().split("\\s+");
        if (text.isBlank()) {
            throw new IllegalArgumentException("--sample_order " + file + " lists no sample; write the indices of the"
                    + " training samples (0.." + (size - 1) + ") in the order to train on them");
        }
        int[] order = new int[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            long index;
            try {
                index = Long.parseLong(tokens[i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--sample_order " + file + ": " + Quoted.of(tokens[i]) + " (entry "
                        + (i + 1) + ") is not a sample index; write whole numbers 0.." + (size - 1));
            }
            if (index < 0 || index >= size) {
                throw new IllegalArgumentException("--sample_order " + file + ": entry " + (i + 1) + " is " + index
                        + ", outside the " + size + " training samples (0.." + (size - 1) + ")");
            }
            order[i] = (int) index;
        }
        return order;
    }
}
