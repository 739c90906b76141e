package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MnistDatasetTest {
    @TempDir
    Path dir;

    @Test
    void bundledDigitsLoadWithAllTenClasses() {
        MnistDataset train = MnistDataset.bundled(MnistDataset.Split.TRAIN);
        MnistDataset test = MnistDataset.bundled(MnistDataset.Split.TEST);
        assertEquals(8000, train.size());
        assertEquals(2000, test.size());
        assertArrayEquals(new long[]{801, 902, 793, 826, 784, 690, 811, 856, 755, 782}, classCounts(train));
        assertArrayEquals(new long[]{200, 225, 198, 206, 196, 173, 203, 214, 189, 196}, classCounts(test));
        for (MnistDataset d : new MnistDataset[]{train, test}) {
            assertEquals(DType.F32, d.images().dtype());
            assertArrayEquals(new long[]{d.size(), 784}, d.images().shape());
            assertEquals(DType.I64, d.labels().dtype());
            assertArrayEquals(new long[]{d.size(), 1}, d.labels().shape());
            float min = Float.MAX_VALUE;
            float max = -Float.MAX_VALUE;
            for (float v : d.images().toFloatArray()) {
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
            assertEquals(0f, min);
            assertEquals(1f, max);
        }
        // The first labels as checked by eye against rendered images (data/mnist/PROVENANCE.md).
        assertArrayEquals(new long[]{4, 9, 9, 9, 5, 2, 8, 7, 3, 3}, firstLabels(train, 10));
        assertArrayEquals(new long[]{5, 0, 0, 7, 4, 3, 8, 3, 0, 4}, firstLabels(test, 10));
    }

    @Test
    void loadsUncompressedFilesAndScalesPixels() {
        writeSplit(dir, "train", new int[]{0, 255, 51, 102, 1, 2, 3, 4}, new int[]{3, 9});
        MnistDataset d = MnistDataset.load(dir, MnistDataset.Split.TRAIN);
        assertArrayEquals(new float[]{0f, 1f, 0.2f, 0.4f, 1 / 255f, 2 / 255f, 3 / 255f, 4 / 255f}, d.images().toFloatArray());
        assertArrayEquals(new long[]{2, 4}, d.images().shape());
        assertArrayEquals(new long[]{3, 9}, d.labels().toLongArray());
        assertEquals(d.images(), d.field("image"));
    }

    @Test
    void imageAndLabelCountsMustAgree() {
        writeSplit(dir, "t10k", new int[]{0, 1, 2, 3, 4, 5, 6, 7}, new int[]{1, 2, 3});
        DataFormatException e = assertThrows(DataFormatException.class, () -> MnistDataset.load(dir, MnistDataset.Split.TEST));
        assertEquals(dir.resolve("t10k-labels-idx1-ubyte") + ": has 3 labels but t10k-images-idx3-ubyte has 2 images; they must agree",
                e.getMessage());
    }

    @Test
    void labelsOutsideZeroToNineAreNamed() {
        writeSplit(dir, "train", new int[]{0, 1, 2, 3, 4, 5, 6, 7}, new int[]{1, 12});
        DataFormatException e = assertThrows(DataFormatException.class, () -> MnistDataset.load(dir, MnistDataset.Split.TRAIN));
        assertEquals(dir.resolve("train-labels-idx1-ubyte") + ": label 1 is 12; expected a digit 0..9", e.getMessage());
    }

    @Test
    void missingFilesAreNamed() {
        DataFormatException e = assertThrows(DataFormatException.class, () -> MnistDataset.load(dir, MnistDataset.Split.TEST));
        assertEquals(dir + ": MNIST file t10k-images-idx3-ubyte not found (looked for t10k-images-idx3-ubyte.gz and"
                + " t10k-images-idx3-ubyte)", e.getMessage());
    }

    @Test
    void findsDataMnistAboveTheWorkingDirectoryOrTheCode() throws IOException {
        Path mnist = Files.createDirectories(dir.resolve("repo/data/mnist"));
        Files.createFile(mnist.resolve("train-images-idx3-ubyte.gz"));
        Path deep = Files.createDirectories(dir.resolve("repo/examples/target"));
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        assertEquals(mnist, MnistDataset.findBundled(null, deep, null));
        assertEquals(mnist, MnistDataset.findBundled("", elsewhere, deep.resolve("fleet4j-core.jar")));
        DataFormatException e = assertThrows(DataFormatException.class, () -> MnistDataset.findBundled(null, elsewhere, elsewhere));
        assertTrue(e.getMessage().contains("no data/mnist directory found") && e.getMessage().contains("FLEET_DATA_DIR"), e.getMessage());
    }

    @Test
    void dataDirVariableOverridesTheSearch() throws IOException {
        Path repoMnist = Files.createDirectories(dir.resolve("repo/data/mnist"));
        Files.createFile(repoMnist.resolve("train-images-idx3-ubyte.gz"));
        Path custom = Files.createDirectories(dir.resolve("custom/mnist"));
        Files.createFile(custom.resolve("train-images-idx3-ubyte"));
        Path repo = dir.resolve("repo");
        assertEquals(custom, MnistDataset.findBundled(dir.resolve("custom").toString(), repo, null));
        assertEquals(custom, MnistDataset.findBundled(custom.toString(), repo, null));
        DataFormatException e = assertThrows(DataFormatException.class,
                () -> MnistDataset.findBundled(dir.resolve("elsewhere").toString(), repo, null));
        assertTrue(e.getMessage().contains("FLEET_DATA_DIR is set to this directory"), e.getMessage());
    }

    private static void writeSplit(Path dir, String prefix, int[] pixels, int[] labels) {
        IdxWriter.write(dir.resolve(prefix + "-images-idx3-ubyte"), Tensor.ofInts(pixels, pixels.length / 4, 2, 2), IdxType.UBYTE, false);
        IdxWriter.write(dir.resolve(prefix + "-labels-idx1-ubyte"), Tensor.ofInts(labels, labels.length), IdxType.UBYTE, false);
    }

    private static long[] classCounts(MnistDataset d) {
        long[] counts = new long[10];
        for (long label : d.labels().toLongArray()) {
            counts[(int) label]++;
        }
        return counts;
    }

    private static long[] firstLabels(MnistDataset d, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = d.labels().getLong(i);
        }
        return out;
    }
}
