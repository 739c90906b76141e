package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.zip.GZIPOutputStream;
import org.fleet4j.core.data.CriteoRow;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code ctr_data} program: Criteo-format training and test files drawn from a {@link PlantedCtrModel},
 * and {@code planted.json} with the planted model's own AUC and logloss on the test file, the best a model can reach.
 */
@AutoService(NamedProgram.class)
@Command(name = "ctr_data", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Writes Criteo-format train/test files from a planted model and its test AUC and logloss.")
public final class CtrData implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "ctr_data";
    }

    static final String PLANTED = "planted.json";

    @Option(names = "--rows", required = true, description = "rows in all, training and test")
    long rows;
    @Option(names = "--out", required = true, description = "folder for train-NNNNN.txt, test.txt and " + PLANTED)
    Path out;
    @Option(names = "--test_fraction", description = "share of the rows in the test file (default ${DEFAULT-VALUE})")
    double testFraction = 0.1;
    @Option(names = "--train_files", description = "training files to spread the training rows over (default ${DEFAULT-VALUE})")
    int trainFiles = 1;
    @Option(names = "--gzip", description = "gzip every file (names end in .gz)")
    boolean gzip;
    @Mixin
    SeedOption seed;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("ctr_data", new CtrData(), args));
    }

    @Override
    public Integer call() throws IOException {
        if (!(testFraction > 0 && testFraction < 1)) {
            throw new IllegalArgumentException("--test_fraction must be between 0 and 1 (exclusive), got " + testFraction);
        }
        long testRows = Math.round(rows * testFraction);
        if (rows < 2 || testRows < 1 || testRows >= rows) {
            throw new IllegalArgumentException("--rows " + rows + " leaves no training or no test rows with --test_fraction "
                    + testFraction + "; ask for more rows");
        }
        if (trainFiles < 1 || trainFiles > rows - testRows) {
            throw new IllegalArgumentException("--train_files must be between 1 and the " + (rows - testRows)
                    + " training rows, got " + trainFiles);
        }
        prepareOut();
        long trainRows = rows - testRows;
        PlantedCtrModel model = new PlantedCtrModel(seed.seed());
        SplittableRandom rnd = new SplittableRandom(seed.seed() ^ 0x5DEECE66DL);
        RowWriter rowWriter = new RowWriter(model);
        long positives = 0;
        List<String> names = new ArrayList<>();
        for (int k = 0; k < trainFiles; k++) {
            // contiguous chunks whose sizes differ by at most one row
            long from = trainRows * k / trainFiles;
            long to = trainRows * (k + 1) / trainFiles;
            String name = String.format(Locale.ROOT, "train-%05d.txt", k) + (gzip ? ".gz" : "");
            names.add(name);
            try (Writer w = open(out.resolve(name))) {
                for (long i = from; i < to; i++) {
                    positives += rowWriter.write(rnd, w).label;
                }
            }
        }
        String testName = "test.txt" + (gzip ? ".gz" : "");
        float[] scores = new float[Math.toIntExact(testRows)];
        int[] labels = new int[scores.length];
        try (Writer w = open(out.resolve(testName))) {
            for (int i = 0; i < scores.length; i++) {
                Written r = rowWriter.write(rnd, w);
                scores[i] = (float) r.score;
                labels[i] = r.label;
                positives += r.label;
            }
        }
        double auc = BinaryMetrics.auc(scores, labels, scores.length);
        double logloss = BinaryMetrics.logloss(scores, labels, scores.length);
        new Summary().put("program", "ctr_data").put("planted_auc", auc).put("planted_logloss", logloss)
                .put("rows", rows).put("train_rows", trainRows).put("test_rows", testRows)
                .put("positive_rate", (double) positives / rows).put("seed", seed.seed())
                .put("zipf_exponent", PlantedCtrModel.ZIPF_EXPONENT).put("missing_rate", PlantedCtrModel.MISSING)
                .put("train_files", names).put("test_file", testName)
                .write(out.resolve(PLANTED));
        System.out.printf(Locale.ROOT, "ctr_data: wrote %,d training rows in %d file(s) and %,d test rows to %s;"
                        + " positive rate %.3f; planted model on the test file: AUC %.4f, logloss %.4f%n",
                trainRows, trainFiles, testRows, out, (double) positives / rows, auc, logloss);
        return 0;
    }

    /** Creates the folder, refusing one that already holds data files (a stale train file would join the next run). */
    private void prepareOut() throws IOException {
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new IllegalArgumentException("--out " + out + " is a file; name a folder");
        }
        Files.createDirectories(out);
        try (DirectoryStream<Path> old = Files.newDirectoryStream(out, "{train*,test*," + PLANTED + "}")) {
            for (Path p : old) {
                throw new IllegalArgumentException("--out " + out + " already holds " + p.getFileName()
                        + "; choose an empty folder or remove its train*, test* and " + PLANTED + " files");
            }
        }
    }

    private Writer open(Path file) throws IOException {
        OutputStream os = Files.newOutputStream(file);
        if (gzip) {
            os = new GZIPOutputStream(os, 1 << 16);
        }
        return new BufferedWriter(new OutputStreamWriter(os, StandardCharsets.US_ASCII), 1 << 16);
    }

    private record Written(int label, double score) {
    }

    /** Draws rows from the planted model and writes each as one Criteo line. */
    private static final class RowWriter {
        private final PlantedCtrModel model;
        private final int[] ranks = new int[CriteoRow.SPARSE];
        private final long[] dense = new long[CriteoRow.DENSE];
        private final boolean[] denseMissing = new boolean[CriteoRow.DENSE];
        private final StringBuilder line = new StringBuilder(512);

        RowWriter(PlantedCtrModel model) {
            this.model = model;
        }

        Written write(SplittableRandom rnd, Writer w) throws IOException {
            double score = model.sample(rnd, ranks, dense, denseMissing);
            int label = rnd.nextDouble() < PlantedCtrModel.sigmoid(score) ? 1 : 0;
            line.setLength(0);
            line.append(label);
            for (int j = 0; j < CriteoRow.DENSE; j++) {
                line.append('\t');
                if (!denseMissing[j]) {
                    line.append(dense[j]);
                }
            }
            for (int f = 0; f < CriteoRow.SPARSE; f++) {
                line.append('\t');
                if (ranks[f] >= 0) {
                    line.append(model.token(f, ranks[f]));
                }
            }
            line.append('\n');
            w.append(line);
            return new Written(label, score);
        }
    }
}
