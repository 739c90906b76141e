package org.fleet4j.fleet.metrics;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.imageio.ImageIO;
import org.fleet4j.text.Quoted;

/**
 * Collects the loss of every step (or another figure at some steps, such as test AUC) by global step, and draws it as a
 * PNG line chart (headless Java2D, no dependency). A training resumed from a checkpoint numbers its steps on from the
 * checkpoint's, so its curves line up with those of the run it continues.
 */
public final class LossCurve {
    private final long firstStep;
    private final List<Long> steps = new ArrayList<>();
    private final List<Double> values = new ArrayList<>();

    /** A curve from step 1. */
    public LossCurve() {
        this(1);
    }

    /** A curve whose first {@link #add(double)} is global step {@code firstStep}. */
    public LossCurve(long firstStep) {
        this.firstStep = firstStep;
    }

    /** The value of the step after the last one added (the first step for the first value). */
    public void add(double value) {
        add(steps.isEmpty() ? firstStep : steps.getLast() + 1, value);
    }

    /** The value at {@code step}, which comes after every step added before. */
    public void add(long step, double value) {
        if (!steps.isEmpty() && step <= steps.getLast()) {
            throw new IllegalArgumentException("step " + step + " does not come after step " + steps.getLast());
        }
        steps.add(step);
        values.add(value);
    }

    public List<Double> values() {
        return List.copyOf(values);
    }

    /** The global step of each value. */
    public List<Long> steps() {
        return List.copyOf(steps);
    }

    /** Writes "step,loss" lines, one per value with its global step, each in full precision, for tools and comparisons. */
    public void writeCsv(Path file) throws IOException {
        StringBuilder csv = new StringBuilder("step,loss\n");
        for (int i = 0; i < values.size(); i++) {
            csv.append(steps.get(i)).append(',').append(values.get(i)).append('\n');
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, csv);
    }

    /** Reads what {@link #writeCsv} wrote for every step: the losses in order, their steps one after another. */
    public static double[] readCsv(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        if (lines.isEmpty() || !lines.getFirst().equals("step,loss")) {
            throw new IOException(file + " is not a loss curve: its first line should be 'step,loss'");
        }
        double[] out = new double[lines.size() - 1];
        long first = 1;
        for (int i = 1; i < lines.size(); i++) {
            String[] cells = lines.get(i).split(",");
            if (i == 1 && cells.length == 2 && cells[0].matches("\\d{1,18}")) {
                first = Long.parseLong(cells[0]);
            }
            if (cells.length != 2 || !cells[0].equals("" + (first + i - 1))) {
                throw new IOException(file + " line " + (i + 1) + ": expected '" + (first + i - 1) + ",LOSS', got "
                        + Quoted.of(lines.get(i)));
            }
            try {
                out[i - 1] = Double.parseDouble(cells[1]);
            } catch (NumberFormatException e) {
                throw new IOException(file + " line " + (i + 1) + ": " + Quoted.of(cells[1]) + " is not a number", e);
            }
        }
        return out;
    }

    /**
     * Draws the curve as a PNG. Its labels need a font; on a machine with none (no fontconfig fonts, as on a bare
     * container) the chart is still written, without labels, and the returned text says why, for the caller to print.
     */
    public Optional<String> writePng(Path file, String title) throws IOException {
        System.setProperty("java.awt.headless", "true");
        int w = 800;
        int h = 480;
        int left = 70;
        int right = 20;
        int top = 40;
        int bottom = 50;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        double max = values.stream().filter(Double::isFinite).mapToDouble(Double::doubleValue).max().orElse(1);
        double min = Math.min(0, values.stream().filter(Double::isFinite).mapToDouble(Double::doubleValue).min().orElse(0));
        if (max <= min) {
            max = min + 1;
        }
        int pw = w - left - right;
        int ph = h - top - bottom;
        Labels labels = new Labels(g);
        labels.font(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (int i = 0; i <= 5; i++) {
            int y = top + ph - ph * i / 5;
            g.setColor(new Color(230, 230, 230));
            g.drawLine(left, y, left + pw, y);
            g.setColor(Color.DARK_GRAY);
            labels.draw(String.format(Locale.ROOT, "%.3f", min + (max - min) * i / 5), 8, y + 4);
        }
        int n = values.size();
        long from = n == 0 ? firstStep : steps.getFirst();
        long span = n == 0 ? 0 : steps.getLast() - from;
        for (int i = 0; i <= 4; i++) {
            int x = left + pw * i / 4;
            labels.draw(String.valueOf(from + span * i / 4), x - 8, top + ph + 18);
        }
        labels.draw("step", left + pw / 2 - 12, h - 12);
        labels.font(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        labels.draw(title, left, 24);
        g.setColor(Color.BLACK);
        g.drawRect(left, top, pw, ph);
        g.setColor(new Color(31, 119, 180));
        g.setStroke(new BasicStroke(1.6f));
        int px = -1;
        int py = -1;
        for (int i = 0; i < n; i++) {
            double v = values.get(i);
            if (!Double.isFinite(v)) {
                continue;
            }
            int x = left + (span == 0 ? pw / 2 : (int) (pw * (steps.get(i) - from) / span));
            int y = top + ph - (int) (ph * (v - min) / (max - min));
            if (px >= 0) {
                g.drawLine(px, py, x, y);
            }
            px = x;
            py = y;
        }
        g.dispose();
        Files.createDirectories(file.toAbsolutePath().getParent());
        ImageIO.write(img, "png", file.toFile());
        return labels.failure().map(reason -> file.getFileName() + " has no labels: the JVM found no usable font ("
                + reason + "); install one, e.g. apt-get install fonts-dejavu-core");
    }

    /** Text on the chart, given up at the first failure of the JVM's font system (the lines are drawn all the same). */
    private static final class Labels {
        private final Graphics2D g;
        private String failure;

        Labels(Graphics2D g) {
            this.g = g;
        }

        void font(Font font) {
            g.setFont(font);
        }

        void draw(String text, int x, int y) {
            if (failure != null) {
                return;
            }
            try {
                g.drawString(text, x, y);
            } catch (RuntimeException | LinkageError | InternalError e) {
                // a missing fontconfig set-up surfaces as a RuntimeException, a missing native font library as a LinkageError
                failure = String.valueOf(e.getMessage());
            }
        }

        Optional<String> failure() {
            return Optional.ofNullable(failure);
        }
    }
}
