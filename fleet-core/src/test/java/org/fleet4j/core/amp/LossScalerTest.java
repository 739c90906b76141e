package org.fleet4j.core.amp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

class LossScalerTest {
    private static AmpConfig config(double init, int incrEvery, int decrEvery, boolean dynamic) {
        return new AmpConfig(AmpDtype.FP16, init, incrEvery, decrEvery, 2.0, 0.5, dynamic, Set.of(), Set.of());
    }

    @Test
    void growsAfterNFiniteStepsInARow() {
        LossScaler s = new LossScaler(config(1024, 3, 2, true));
        assertTrue(s.update(false));
        assertTrue(s.update(false));
        assertEquals(1024, s.scale());
        assertTrue(s.update(false));
        assertEquals(2048, s.scale());
        s.update(false);
        s.update(true); // a bad step resets the good count
        s.update(false);
        s.update(false);
        assertEquals(2048, s.scale());
        s.update(false);
        assertEquals(4096, s.scale());
    }

    @Test
    void shrinksAfterNBadStepsInARowAndSkipsThem() {
        LossScaler s = new LossScaler(config(1024, 1000, 2, true));
        assertFalse(s.update(true));
        assertEquals(1024, s.scale());
        assertFalse(s.update(true));
        assertEquals(512, s.scale());
        assertTrue(s.update(false)); // resets the bad count
        assertFalse(s.update(true));
        assertEquals(512, s.scale());
        assertFalse(s.update(true));
        assertEquals(256, s.scale());
        assertEquals(4, s.skippedSteps());
    }

    @Test
    void neverBelowOneNorBeyondFloatRange() {
        LossScaler low = new LossScaler(config(2, 1000, 1, true));
        for (int i = 0; i < 5; i++) {
            low.update(true);
        }
        assertEquals(1, low.scale());
        LossScaler high = new LossScaler(config(0x1p127, 1, 2, true));
        high.update(false);
        assertEquals(0x1p127, high.scale(), "2^128 overflows fp32: keep the scale");
    }

    @Test
    void staticScalingStillSkipsBadSteps() {
        LossScaler s = new LossScaler(config(128, 1, 1, false));
        assertFalse(s.update(true));
        assertTrue(s.update(false));
        assertEquals(128, s.scale());
        assertEquals(1, s.skippedSteps());
    }

    @Test
    void unscaleDividesAndDetectsInfAndNan() {
        LossScaler s = new LossScaler(config(4, 10, 2, true));
        Tensor a = Tensor.of(new float[]{4, -8, 2});
        Tensor b = Tensor.of(new float[]{1});
        assertFalse(s.unscale(List.of(a, b)));
        assertEquals(-2f, a.getFloat(1));
        assertEquals(0.25f, b.getFloat(0));
        assertTrue(s.unscale(List.of(Tensor.of(new float[]{1, Float.NaN}))));
        assertTrue(s.unscale(List.of(Tensor.of(new float[]{Float.POSITIVE_INFINITY}))));
    }

    @Test
    void configErrorsNameTheKey() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new AmpConfig(AmpDtype.FP16, 0.5, 1, 1, 2, 0.5, true, Set.of(), Set.of()));
        assertEquals("amp_configs.init_loss_scaling = 0.5: expected a finite number >= 1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new AmpConfig(AmpDtype.FP16, 8, 1, 1, 2, 1.5, true, Set.of(), Set.of()));
        assertEquals("amp_configs.decr_ratio = 1.5: expected a number in (0, 1)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new AmpConfig(AmpDtype.FP16, 8, 1, 1, 2, 0.5, true, Set.of("softmax"), Set.of("softmax")));
        assertTrue(e.getMessage().contains("'softmax' is in both"), e.getMessage());
        assertEquals(AmpDtype.BF16, AmpDtype.parse("bfloat16"));
        assertThrows(IllegalArgumentException.class, () -> AmpDtype.parse("fp8"));
    }

    @Test
    void defaultsAreTheStrategyDefaults() {
        AmpConfig c = AmpConfig.defaults(AmpDtype.FP16);
        assertEquals(32768.0, c.initLossScaling());
        assertEquals(1000, c.incrEveryNSteps());
        assertEquals(2, c.decrEveryNNanOrInf());
        assertFalse(AmpConfig.defaults(AmpDtype.BF16).useDynamicLossScaling());
    }

    @Test
    void opLists() {
        AmpOpLists lists = new AmpOpLists(new AmpConfig(AmpDtype.BF16, 1, 1, 1, 2, 0.5, false,
                Set.of("softmax"), Set.of("matmul")));
        assertEquals(AmpOpLists.Precision.REDUCED, lists.precisionOf("softmax"));
        assertEquals(AmpOpLists.Precision.FP32, lists.precisionOf("matmul"));
        assertEquals(AmpOpLists.Precision.REDUCED, lists.precisionOf("fc"));
        assertEquals(AmpOpLists.Precision.FP32, lists.precisionOf("mean"));
        assertEquals(AmpOpLists.Precision.FOLLOW_INPUTS, lists.precisionOf("relu"));
    }
}
