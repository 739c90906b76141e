package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** Learning-rate schedules at chosen steps, in Java and through the lr_schedule op. */
class LrScheduleTest {

    @Test
    void constant() {
        LrSchedule s = LrSchedule.constant(0.01);
        assertEquals(0.01, s.at(0), 0);
        assertEquals(0.01, s.at(1_000_000), 0);
    }

    @Test
    void stepDecayHalvesEveryThreeSteps() {
        LrSchedule s = LrSchedule.stepDecay(0.1, 3, 0.5);
        assertEquals(0.1, s.at(0), 1e-15);
        assertEquals(0.1, s.at(2), 1e-15);
        assertEquals(0.05, s.at(3), 1e-15);
        assertEquals(0.05, s.at(5), 1e-15);
        assertEquals(0.025, s.at(6), 1e-15);
    }

    @Test
    void cosineFromBaseToMinimum() {
        LrSchedule s = LrSchedule.cosine(1.0, 10, 0.1);
        assertEquals(1.0, s.at(0), 1e-15);
        assertEquals(0.55, s.at(5), 1e-15, "half way: the mean of base and minimum");
        assertEquals(0.1 + 0.45 * (1 + Math.cos(Math.PI * 0.2)), s.at(2), 1e-15);
        assertEquals(0.1, s.at(10), 1e-15);
        assertEquals(0.1, s.at(25), 1e-15, "stays at the minimum after total_steps");
    }

    @Test
    void warmupRampsLinearlyThenDecays() {
        LrSchedule s = LrSchedule.cosine(1.0, 10, 0).withWarmup(4, 0.0);
        assertEquals(0.0, s.at(0), 1e-15);
        assertEquals(0.25, s.at(1), 1e-15);
        assertEquals(0.75, s.at(3), 1e-15);
        assertEquals(1.0, s.at(4), 1e-15, "the decay starts after warm-up");
        assertEquals(0.5, s.at(7), 1e-15, "half of the 6 decay steps");
        assertEquals(0.0, s.at(10), 1e-15);
    }

    @Test
    void theOpComputesTheSameRates() {
        LrSchedule s = LrSchedule.cosine(0.5, 20, 0.01).withWarmup(5, 0.05);
        Program p = new Program();
        p.globalBlock().createVar("step", DType.I64, 1).setData(true);
        p.globalBlock().appendOp("lr_schedule", Map.of("Step", List.of("step")), Map.of("LearningRate", List.of("lr")),
                s.attrs());
        var exe = new org.fleet4j.core.exec.Executor();
        for (long step : new long[]{0, 3, 5, 12, 20, 30}) {
            Tensor lr = exe.run(p, new org.fleet4j.core.exec.Scope(),
                    Map.of("step", Tensor.ofLongs(new long[]{step}, 1)), List.of("lr")).get("lr");
            assertEquals(s.at(step), lr.getFloat(0), 1e-7, "step " + step);
        }
    }

    @Test
    void badSchedulesAreRejectedAtBuildTime() {
        Program p = new Program();
        p.globalBlock().createVar("step", DType.I64, 1).setData(true);
        var e = assertThrows(IrException.class, () -> p.globalBlock().appendOp("lr_schedule",
                Map.of("Step", List.of("step")), Map.of("LearningRate", List.of("lr")),
                Map.of("base_lr", 0.1f, "decay", "exponential")));
        assertTrue(e.getMessage().contains("decay 'exponential' is not one of constant, step, cosine"), e.getMessage());
    }
}
