package org.fleet4j.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.fleet4j.core.data.IdxReader;
import org.fleet4j.core.data.IdxType;
import org.fleet4j.core.data.IdxWriter;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The first shipped digits with seeded dense noise (grey 3/4 v + u, u uniform in 0..63), as the four MNIST IDX files,
 * for tests that compare trainings step by step. On the digits themselves the zero background makes whole regions of
 * a convolution's output identical; where such a value lies within rounding of a ReLU's kink, two correct float32
 * trainings flip hundreds of pixels at once, one at this step and the other at the next, and part by far more than
 * their float32 noise. With noise no two windows are alike, and such ties become rare.
 */
final class NoisyDigits {
    private NoisyDigits() {
    }

    /** Writes {@code train} training and {@code test} test digits into {@code dir}; returns it. */
    static Path write(Path dir, int train, int test, long seed) {
        try {
            Files.createDirectories(dir);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (MnistDataset.Split split : MnistDataset.Split.values()) {
            int n = split == MnistDataset.Split.TRAIN ? train : test;
            Path bundled = MnistDataset.bundledDirectory();
            Tensor images = IdxReader.read(bundled.resolve(split.imagesFile() + ".gz"));
            Tensor labels = IdxReader.read(bundled.resolve(split.labelsFile() + ".gz"));
            Tensor noisy = Tensor.zeros(DType.I32, n, images.dim(1), images.dim(2));
            for (long i = 0; i < noisy.numel(); i++) {
                noisy.setLong(i, images.getLong(i) * 3 / 4 + random.nextInt(64));
            }
            IdxWriter.write(dir.resolve(split.imagesFile()), noisy, IdxType.UBYTE, false);
            IdxWriter.write(dir.resolve(split.labelsFile()), labels.rows(0, n), IdxType.UBYTE, false);
        }
        return dir;
    }
}
