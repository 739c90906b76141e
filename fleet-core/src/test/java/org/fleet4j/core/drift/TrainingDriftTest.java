package org.fleet4j.core.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TrainingDriftTest {
    private static TrainingRecord run(float w0, float w1, float b, double... losses) {
        return new TrainingRecord(Map.of("w", new float[]{w0, w1}, "b", new float[]{b}), losses);
    }

    private static final TrainingRecord REFERENCE = run(1f, -2f, 0.5f, 2.0, 1.5, 1.0);
    /** The noise run: w apart by 1e-4, b bit-equal, the loss apart by 1e-4 at step 2 only. */
    private static final TrainingDrift NOISE = TrainingDrift.between(REFERENCE, run(1f, -2.0001f, 0.5f, 2.0, 1.5001, 1.0));

    @Test
    void eachParameterTensorIsJudgedByItsOwnNoiseAndEveryStepByTheRunsLargestLossNoise() {
        TrainingDrift drift = TrainingDrift.between(REFERENCE, run(1.0002f, -2f, 0.5f, 2.0003, 1.5, 1.0));
        Map<String, Double> ratios = drift.ratioTo(NOISE);
        assertEquals(2.0, ratios.get("w"), 0.01);
        assertEquals(0.0, ratios.get("b"));
        // step 1 had no noise of its own, yet is judged against the noise of step 2: runs part at different steps
        assertEquals(3.0, ratios.get("step 1"), 0.01);
        assertEquals(List.of(), drift.beyond(NOISE, 4));
        List<String> beyond = drift.beyond(NOISE, 2.5);
        assertEquals(1, beyond.size(), beyond.toString());
        assertTrue(beyond.getFirst().startsWith("the loss of step 1: differs by 0.000300, 3.0 times the float32 noise"),
                beyond.getFirst());
    }

    @Test
    void whatTheNoiseLeftBitEqualIsJudgedAgainstAFewUlpsNotZero() {
        float b = 0.5f;
        float fewUlpsOff = b + 4 * Math.ulp(b);
        assertEquals(List.of(), TrainingDrift.between(REFERENCE, run(1f, -2f, fewUlpsOff, 2.0, 1.5, 1.0)).beyond(NOISE, 1));
        List<String> beyond = TrainingDrift.between(REFERENCE, run(1f, -2f, b + 1e-3f, 2.0, 1.5, 1.0)).beyond(NOISE, 4);
        assertEquals(1, beyond.size(), beyond.toString());
        assertTrue(beyond.getFirst().startsWith("b: differs by 0.00100"), beyond.getFirst());
    }

    @Test
    void runsOfDifferentTrainingsAreRefusedNamingWhatDiffers() {
        var other = new TrainingRecord(Map.of("w", new float[]{1f, -2f}), new double[]{2.0, 1.5, 1.0});
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainingDrift.between(REFERENCE, other))
                .getMessage().contains("different parameters"));
        var shorter = run(1f, -2f, 0.5f, 2.0, 1.5);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainingDrift.between(REFERENCE, shorter))
                .getMessage().contains("took 3 and 2 steps"));
    }
}
