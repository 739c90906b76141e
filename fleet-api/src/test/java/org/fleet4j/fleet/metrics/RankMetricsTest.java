package org.fleet4j.fleet.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RankMetricsTest {
    @TempDir
    Path dir;

    @Test
    void theFileHasALinePerFigureGivenInTheCataloguesOrderAndSampledFiguresAreReadWhenWritten() {
        AtomicInteger queue = new AtomicInteger(3);
        try (RankMetrics m = RankMetrics.fromEnvironment(Map.of(RankMetrics.FILE_ENV, dir.resolve("m").toString()))) {
            assertTrue(m.reporting());
            m.set(RankMetric.LOSS, 0.25);
            m.add(RankMetric.STEPS, 1);
            m.add(RankMetric.STEPS, 1);
            m.sample(RankMetric.PS_SEND_QUEUE_DEPTH, queue::get);
            queue.set(5);
            assertEquals("fleet_rank_steps_total 2.0\nfleet_rank_loss 0.25\nfleet_rank_ps_send_queue_depth 5.0\n", m.render());
        }
    }

    @Test
    void theFileIsWrittenWithinTheIntervalAndHoldsTheLastFiguresAfterClose() throws Exception {
        Path file = dir.resolve("workermetrics.3");
        RankMetrics m = RankMetrics.fromEnvironment(Map.of(RankMetrics.FILE_ENV, file.toString()));
        m.set(RankMetric.STEP_SECONDS, 0.5);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(file)) {
            assertTrue(System.nanoTime() < deadline, "no " + file + " within 30 s");
            Thread.onSpinWait();
        }
        assertEquals("fleet_rank_step_seconds 0.5\n", Files.readString(file));
        m.set(RankMetric.STEP_SECONDS, 0.25);
        m.close();
        assertEquals("fleet_rank_step_seconds 0.25\n", Files.readString(file));
        assertFalse(Files.exists(dir.resolve("workermetrics.3.tmp")));
    }

    @Test
    void withoutTheVariableTheFiguresAreOnlyKept() {
        try (RankMetrics m = RankMetrics.fromEnvironment(Map.of())) {
            assertFalse(m.reporting());
            m.set(RankMetric.LOSS, 1);
            assertEquals(1, m.value(RankMetric.LOSS));
        }
    }

    @Test
    void everyMetricIsFoundByItsExposedName() {
        for (RankMetric m : RankMetric.values()) {
            assertEquals(m, RankMetric.byName(m.exposedName()));
            assertTrue(m.exposedName().matches("fleet_rank_[a-z_]+") && m.exposedName().endsWith("_total") == m.type().equals("counter"), m.exposedName());
        }
    }
}
