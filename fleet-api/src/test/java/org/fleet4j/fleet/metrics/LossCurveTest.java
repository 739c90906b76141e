package org.fleet4j.fleet.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    void aFileThatIsNotALossCurveIsRefusedNamingTheFileAndLine() throws IOException {
        Path other = Files.writeString(dir.resolve("other.csv"), "a,b\n1,2\n");
        assertEquals(other + " is not a loss curve: its first line should be 'step,loss'",
                assertThrows(IOException.class, () -> LossCurve.readCsv(other)).getMessage());
        Path gap = Files.writeString(dir.resolve("gap.csv"), "step,loss\n1,2.0\n3,1.0\n");
        assertEquals(gap + " line 3: expected '2,LOSS', got '3,1.0'",
                assertThrows(IOException.class, () -> LossCurve.readCsv(gap)).getMessage());
    }
}
