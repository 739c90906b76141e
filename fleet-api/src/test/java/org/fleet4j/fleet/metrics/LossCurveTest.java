package org.fleet4j.fleet.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LossCurveTest {
    @TempDir
    Path dir;

    @Test
    void theCsvHoldsEveryStepsLossExactly() throws IOException {
        LossCurve curve = new LossCurve();
        double[] losses = {2.334360361099243, 1.0 / 3, 1.0526527166366577};
        for (double l : losses) {
            curve.add(l);
        }
        Path csv = dir.resolve("loss_curve.csv");
        curve.writeCsv(csv);
        assertEquals("step,loss\n1,2.334360361099243\n2,0.3333333333333333\n3,1.0526527166366577\n", Files.readString(csv));
        assertArrayEquals(losses, LossCurve.readCsv(csv));
    }

    @Test
    void aResumedCurveNumbersItsStepsOnFromTheCheckpointsAndReadsBack() throws IOException {
        LossCurve curve = new LossCurve(23);
        curve.add(0.5);
        curve.add(0.25);
        Path csv = dir.resolve("resumed.csv");
        curve.writeCsv(csv);
        assertEquals("step,loss\n23,0.5\n24,0.25\n", Files.readString(csv));
        assertArrayEquals(new double[]{0.5, 0.25}, LossCurve.readCsv(csv));
        LossCurve points = new LossCurve();
        points.add(4, 0.7);
        points.add(8, 0.75);
        assertEquals(List.of(4L, 8L), points.steps());
        assertThrows(IllegalArgumentException.class, () -> points.add(8, 0.8), "steps only go forward");
    }

    @Test
    void aFileThatIsNotALossCurveIsRefusedNamingTheFileAndLine() throws IOException {
        Path other = Files.writeString(dir.resolve("other.csv"), "a,b\n1,2\n");
        assertEquals(other + " is not a loss curve: its first line should be 'step,loss'",
                assertThrows(IOException.class, () -> LossCurve.readCsv(other)).getMessage());
        Path gap = Files.writeString(dir.resolve("gap.csv"), "step,loss\n1,2.0\n3,1.0\n");
        assertEquals(gap + " line 3: expected '2,LOSS', got '3,1.0'",
                assertThrows(IOException.class, () -> LossCurve.readCsv(gap)).getMessage());
    }

    /**
     * A machine with no usable font (the GPU machines' image, a bare container): the chart is still written, with the
     * reason its labels are missing. Runs in a child JVM whose fontconfig set-up lists no font, since the JVM reads
     * its fonts once; such a JVM threw "Fontconfig head is null" out of mnist before.
     */
    @Test
    void withoutFontsTheChartIsWrittenWithoutLabelsAndSaysWhy() throws Exception {
        Path conf = Files.writeString(dir.resolve("fonts.conf"), "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n");
        Path png = dir.resolve("loss_curve.png");
        String java = ProcessHandle.current().info().command().orElseThrow();
        // a home of its own: the JVM caches what fontconfig found under ~/.java/fonts and would read that instead
        Path home = Files.createDirectories(dir.resolve("home"));
        ProcessBuilder pb = new ProcessBuilder(java, "-Duser.home=" + home, "-cp", System.getProperty("java.class.path"),
                WritePng.class.getName(), png.toString()).redirectErrorStream(true);
        pb.environment().put("FONTCONFIG_FILE", conf.toString());
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM writing " + png + " did not end within 60 s");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        assertTrue(output.contains("loss_curve.png has no labels: the JVM found no usable font (")
                && output.contains("fonts-dejavu-core"), output);
        assertEquals(800, ImageIO.read(png.toFile()).getWidth());
    }

    /** The child of the test above: writes a curve and prints what writePng returned. */
    public static final class WritePng {
        public static void main(String[] args) throws IOException {
            LossCurve curve = new LossCurve();
            List.of(2.3, 1.1, 0.4).forEach(curve::add);
            System.out.println(curve.writePng(Path.of(args[0]), "title").orElse("labelled"));
        }
    }

    @Test
    void withFontsTheChartIsLabelled() throws IOException {
        LossCurve curve = new LossCurve();
        List.of(2.3, 1.1, 0.4).forEach(curve::add);
        assertEquals(java.util.Optional.empty(), curve.writePng(dir.resolve("c.png"), "title"));
    }
}
