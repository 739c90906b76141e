package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Windows of a character-level text for a language model: a window at {@code start} is the block_size ids from there
 * (the input) and the block_size ids one further on (the targets, each input's next character).
 *
 * <p>Training batches are random windows whose starts depend only on (seed, batch number, row): SplitMix64, spelled
 * out as {@link EpochPermutation} does, so every rank computes the same global batch without talking to the others,
 * and a training resumed at batch k draws exactly the batches an uninterrupted one would. Validation uses a fixed set
 * of non-overlapping windows.
 */
public final class TextWindows {
    private final int[] text;
    private final int blockSize;

    /**
     * Windows of {@code blockSize} over {@code text}; {@code what} names the text in the refusal of one too short to
     * hold a single window ("the validation text of names.txt").
     */
    public TextWindows(int[] text, int blockSize, String what) {
        if (blockSize < 1) {
            throw new IllegalArgumentException("block_size must be at least 1, got " + blockSize);
        }
        if (text.length < blockSize + 1L) {
            throw new IllegalArgumentException(what + " has " + text.length + " characters, fewer than block_size + 1 = "
                    + (blockSize + 1L) + " that one window needs; give a longer text or a smaller block_size");
        }
        this.text = text;
        this.blockSize = blockSize;
    }

    public int blockSize() {
        return blockSize;
    }

    /** How many different windows the text holds: the starts 0 .. length - block_size - 1. */
    public long count() {
        return text.length - (long) blockSize;
    }

    /** The starts of the {@code rows} random windows of batch {@code batch} (from 0) for {@code seed}. */
    public long[] randomStarts(long seed, long batch, int rows) {
        long[] starts = new long[rows];
        long state = EpochPermutation.mix(seed ^ EpochPermutation.mix(batch + EpochPermutation.GOLDEN));
        for (int r = 0; r < rows; r++) {
            state += EpochPermutation.GOLDEN;
            starts[r] = Math.unsignedMultiplyHigh(EpochPermutation.mix(state), count());
        }
        return starts;
    }

    /**
     * The validation windows: non-overlapping ones from the text's start (0, block_size, 2 block_size, ...), so every
     * character but the first is predicted once; at most {@code limit} of them, evenly spread (0 for all).
     */
    public long[] sweepStarts(int limit) {
        int all = (int) ((text.length - 1L) / blockSize);
        int n = limit > 0 ? Math.min(limit, all) : all;
        long[] starts = new long[n];
        for (int i = 0; i < n; i++) {
            starts[i] = (long) (i * (long) all / n) * blockSize;
        }
        return starts;
    }

    /** A batch of the windows at {@code starts}: ids and targets, int64 [starts.length, block_size] each. */
    public Tensor[] batch(long[] starts) {
        Tensor ids = Tensor.zeros(DType.I64, starts.length, blockSize);
        Tensor targets = Tensor.zeros(DType.I64, starts.length, blockSize);
        fill(starts, ids, targets);
        return new Tensor[]{ids, targets};
    }

    /** Writes the windows at {@code starts} into ids and targets [starts.length, block_size] (int64). */
    public void fill(long[] starts, Tensor ids, Tensor targets) {
        for (int r = 0; r < starts.length; r++) {
            long s = starts[r];
            if (s < 0 || s >= count()) {
                throw new IllegalArgumentException("window start " + s + " is outside 0.." + (count() - 1)
                        + " (a text of " + text.length + " characters, block_size " + blockSize + ")");
            }
            long row = (long) r * blockSize;
            for (int t = 0; t < blockSize; t++) {
                ids.setLong(row + t, text[(int) s + t]);
                targets.setLong(row + t, text[(int) s + t + 1]);
            }
        }
    }
}
