package org.fleet4j.core.data;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.fleet4j.text.Quoted;

/**
 * Training batches given as a file of window starts, one batch a line (the global batch's starts separated by spaces),
 * so that two frameworks train on the same batches: both read the file. Every line is checked when read: its count of
 * starts, each an integer inside the text.
 */
public record WindowFile(Path file, List<long[]> batches) {

    /** Reads {@code file}, each line {@code globalBatch} starts in 0 .. windows - 1; fails naming the file and line. */
    public static WindowFile read(Path file, int globalBatch, long windows) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new DataFormatException(file, Files.exists(file) ? "cannot be read as text (" + e + ")"
                    : "does not exist; give a file of window starts, one batch a line", e);
        }
        if (lines.isEmpty()) {
            throw new DataFormatException(file, "holds no batch; give one line of " + globalBatch + " window starts per step");
        }
        long[][] batches = new long[lines.size()][];
        for (int i = 0; i < lines.size(); i++) {
            String[] cells = lines.get(i).strip().split("\\s+");
            if (cells.length != globalBatch) {
                throw new DataFormatException(file, "line " + (i + 1) + " has " + (lines.get(i).isBlank() ? 0 : cells.length)
                        + " window starts; every line needs one per row of the global batch, " + globalBatch);
            }
            batches[i] = new long[globalBatch];
            for (int r = 0; r < globalBatch; r++) {
                long s;
                try {
                    s = Long.parseLong(cells[r]);
                } catch (NumberFormatException e) {
                    throw new DataFormatException(file, "line " + (i + 1) + ": " + Quoted.of(cells[r]) + " is not an integer");
                }
                if (s < 0 || s >= windows) {
                    throw new DataFormatException(file, "line " + (i + 1) + ": window start " + s + " is outside the"
                            + " training text's 0.." + (windows - 1));
                }
                batches[i][r] = s;
            }
        }
        return new WindowFile(file, List.of(batches));
    }

    /** The starts of batch {@code batch} (from 0); fails when the file has fewer lines. */
    public long[] starts(long batch) {
        if (batch >= batches.size()) {
            throw new IllegalArgumentException(file + " has " + batches.size() + " batches; batch " + (batch + 1)
                    + " is past its end: give a file with a line for every step");
        }
        return batches.get((int) batch);
    }
}
