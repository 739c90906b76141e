package org.fleet4j.core.data;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.List;

/**
 * MNIST-style digits from the four standard IDX files ({@code train-images-idx3-ubyte}, {@code train-labels-idx1-ubyte},
 * {@code t10k-images-idx3-ubyte}, {@code t10k-labels-idx1-ubyte}, each gzipped or not). Field "image" is float32
 * [N, rows*cols] scaled to [0, 1]; field "label" is int64 [N, 1].
 */
public final class MnistDataset implements Dataset {
    /** Points at the directory holding {@code mnist/} (or at the MNIST directory itself); overrides the search. */
    public static final String DATA_DIR_ENV = "FLEET_DATA_DIR";
    private static final List<String> FIELD_NAMES = List.of("image", "label");
    private static final int CLASSES = 10;

    public enum Split {
        TRAIN("train"),
        TEST("t10k");

        private final String filePrefix;

        Split(String filePrefix) {
            this.filePrefix = filePrefix;
        }

        public String imagesFile() {
            return filePrefix + "-images-idx3-ubyte";
        }

        public String labelsFile() {
            return filePrefix + "-labels-idx1-ubyte";
        }
    }

    private final Tensor images;
    private final Tensor labels;
    private final long rows;
    private final long cols;

    private MnistDataset(Tensor images, Tensor labels, long rows, long cols) {
        this.images = images;
        this.labels = labels;
        this.rows = rows;
        this.cols = cols;
    }

    /** Loads one split from {@code dir}. */
    public static MnistDataset load(Path dir, Split split) {
        if (!Files.isDirectory(dir)) {
            throw new DataFormatException(dir, "MNIST directory does not exist");
        }
        Path imageFile = find(dir, split.imagesFile());
        Path labelFile = find(dir, split.labelsFile());
        Tensor rawImages = IdxReader.read(imageFile);
        Tensor rawLabels = IdxReader.read(labelFile);
        if (rawImages.rank() != 3 || rawImages.dtype() != DType.I32) {
            throw new DataFormatException(imageFile, "holds " + rawImages.describe() + "; expected integer images [N, rows, cols]");
        }
        if (rawLabels.rank() != 1 || rawLabels.dtype() != DType.I32) {
            throw new DataFormatException(labelFile, "holds " + rawLabels.describe() + "; expected integer labels [N]");
        }
        if (rawImages.dim(0) != rawLabels.dim(0)) {
            throw new DataFormatException(labelFile, "has " + rawLabels.dim(0) + " labels but " + imageFile.getFileName()
                    + " has " + rawImages.dim(0) + " images; they must agree");
        }
        return new MnistDataset(scaledImages(imageFile, rawImages), checkedLabels(labelFile, rawLabels), rawImages.dim(1),
                rawImages.dim(2));
    }

    /** Loads one split of the MNIST digits shipped in the repository's {@code data/mnist} (see {@link #bundledDirectory()}). */
    public static MnistDataset bundled(Split split) {
        return load(bundledDirectory(), split);
    }

    /**
     * The shipped MNIST directory: {@code $FLEET_DATA_DIR/mnist} (or {@code $FLEET_DATA_DIR} itself) when the variable
     * is set, otherwise the first {@code data/mnist} found walking up from the working directory, then from the
     * location of this code's jar or classes directory.
     */
    public static Path bundledDirectory() {
        return findBundled(System.getenv(DATA_DIR_ENV), Path.of("").toAbsolutePath(), codeLocation());
    }

    static Path findBundled(String dataDirEnv, Path workingDir, Path codeLocation) {
        if (dataDirEnv != null && !dataDirEnv.isBlank()) {
            Path root = Path.of(dataDirEnv).toAbsolutePath();
            for (Path candidate : List.of(root.resolve("mnist"), root)) {
                if (holdsMnist(candidate)) {
                    return candidate;
                }
            }
            throw new DataFormatException(root, DATA_DIR_ENV + " is set to this directory, but neither it nor its mnist/"
                    + " subdirectory holds " + Split.TRAIN.imagesFile() + "[.gz]");
        }
        for (Path start : new Path[]{workingDir, codeLocation}) {
            for (Path p = start == null ? null : start.toAbsolutePath(); p != null; p = p.getParent()) {
                Path candidate = p.resolve("data").resolve("mnist");
                if (holdsMnist(candidate)) {
                    return candidate;
                }
            }
        }
        throw new DataFormatException(workingDir, "no data/mnist directory found above the working directory or above the"
                + " code location " + codeLocation + "; set " + DATA_DIR_ENV + " to the directory that holds mnist/");
    }

    private static boolean holdsMnist(Path dir) {
        return Files.isRegularFile(dir.resolve(Split.TRAIN.imagesFile() + ".gz"))
                || Files.isRegularFile(dir.resolve(Split.TRAIN.imagesFile()));
    }

    private static Path codeLocation() {
        CodeSource source = MnistDataset.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return null;
        }
        try {
            return Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }

    private static Path find(Path dir, String name) {
        Path gz = dir.resolve(name + ".gz");
        Path plain = dir.resolve(name);
        if (Files.isRegularFile(gz)) {
            return gz;
        }
        if (Files.isRegularFile(plain)) {
            return plain;
        }
        throw new DataFormatException(dir, "MNIST file " + name + " not found (looked for " + name + ".gz and " + name + ")");
    }

    private static Tensor scaledImages(Path file, Tensor raw) {
        long n = raw.dim(0);
        long pixels = raw.dim(1) * raw.dim(2);
        Tensor out = Tensor.zeros(DType.F32, n, pixels);
        MemorySegment src = raw.segment();
        MemorySegment dst = out.segment();
        for (long i = 0; i < raw.numel(); i++) {
            int v = src.getAtIndex(ValueLayout.JAVA_INT, i);
            if (v < 0 || v > 255) {
                throw new DataFormatException(file, "pixel " + i % pixels + " of image " + i / pixels + " is " + v
                        + "; expected a grey level 0..255");
            }
            dst.setAtIndex(ValueLayout.JAVA_FLOAT, i, v / 255f);
        }
        return out;
    }

    private static Tensor checkedLabels(Path file, Tensor raw) {
        Tensor out = Tensor.zeros(DType.I64, raw.dim(0), 1);
        for (long i = 0; i < raw.numel(); i++) {
            long v = raw.getLong(i);
            if (v < 0 || v >= CLASSES) {
                throw new DataFormatException(file, "label " + i + " is " + v + "; expected a digit 0..9");
            }
            out.setLong(i, v);
        }
        return out;
    }

    /** float32 [N, rows*cols], grey levels scaled to [0, 1]. */
    public Tensor images() {
        return images;
    }

    /** The height of every image, from the images file's header. */
    public long imageRows() {
        return rows;
    }

    /** The width of every image, from the images file's header. */
    public long imageCols() {
        return cols;
    }

    /**
     * The same samples with field "image" as float32 [N, 1, rows, cols] (a view of {@link #images()}), for
     * convolutional networks.
     */
    public Dataset asNchw() {
        return new TensorDataset(FIELD_NAMES, List.of(images.reshape(images.dim(0), 1, rows, cols), labels));
    }

    /** int64 [N, 1], digits 0..9. */
    public Tensor labels() {
        return labels;
    }

    @Override
    public int size() {
        return (int) images.dim(0);
    }

    @Override
    public List<String> fieldNames() {
        return FIELD_NAMES;
    }

    @Override
    public List<Tensor> fields() {
        return List.of(images, labels);
    }
}
