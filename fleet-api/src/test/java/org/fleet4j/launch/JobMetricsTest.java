package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.metrics.RankMetric;
import org.fleet4j.launch.JobMetrics.ProcessState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobMetricsTest {
    @TempDir
    Path dir;

    private JobMetrics metrics(ProcessState... states) {
        return new JobMetrics(rank -> dir.resolve("workermetrics." + rank), () -> List.of(states));
    }

    @Test
    void eachProcessesStateAndEachRanksReportedFiguresInTheTextFormat() throws Exception {
        Files.writeString(dir.resolve("workermetrics.0"), "fleet_rank_steps_total 12.0\nfleet_rank_step_seconds 0.0125\n"
                + "fleet_rank_allreduce_seconds 1.5E-4\n");
        Files.writeString(dir.resolve("workermetrics.1"), "fleet_rank_steps_total 11.0\nnot a figure\nfleet_rank_loss x\n"
                + "fleet_other 3\n\nfleet_rank_loss 0.5\n");
        String text = metrics(new ProcessState(Role.Kind.PSERVER, 0, true, 0), new ProcessState(Role.Kind.TRAINER, 1, false, 137),
                new ProcessState(Role.Kind.TRAINER, 0, true, 0)).render();
        assertEquals("""
                # HELP fleet_rank_up 1 while the rank's process runs, 0 once it has ended.
                # TYPE fleet_rank_up gauge
                fleet_rank_up{rank="0"} 1
                fleet_rank_up{rank="1"} 0
                # HELP fleet_rank_exit_code The exit code of a rank that has ended (128 + the signal for one killed by a signal); fleetrun does not restart it.
                # TYPE fleet_rank_exit_code gauge
                fleet_rank_exit_code{rank="1"} 137
                # HELP fleet_server_up 1 while the server's process runs, 0 once it has ended.
                # TYPE fleet_server_up gauge
                fleet_server_up{server="0"} 1
                # HELP fleet_rank_steps_total Training steps the rank has finished.
                # TYPE fleet_rank_steps_total counter
                fleet_rank_steps_total{rank="0"} 12
                fleet_rank_steps_total{rank="1"} 11
                # HELP fleet_rank_step_seconds Wall time of the rank's last step.
                # TYPE fleet_rank_step_seconds gauge
                fleet_rank_step_seconds{rank="0"} 0.0125
                # HELP fleet_rank_loss The training loss of the last step.
                # TYPE fleet_rank_loss gauge
                fleet_rank_loss{rank="1"} 0.5
                # HELP fleet_rank_allreduce_seconds Time of the last step in collective ops: gradient allreduces, and the waits for overlapped ones.
                # TYPE fleet_rank_allreduce_seconds gauge
                fleet_rank_allreduce_seconds{rank="0"} 1.5e-4
                """, text);
    }

    @Test
    void aRankWithoutAFileOrWithOneTooLargeShowsOnlyItsState() throws Exception {
        Files.writeString(dir.resolve("workermetrics.1"), "fleet_rank_loss 0.5\n".repeat(5000));
        assertEquals(Map.of(), JobMetrics.read(dir.resolve("workermetrics.1")));
        assertEquals(Map.of(), JobMetrics.read(dir.resolve("workermetrics.0")));
        assertEquals(Map.of(RankMetric.LOSS, 0.5), JobMetrics.read(Files.writeString(dir.resolve("m"), "fleet_rank_loss 0.5\n")));
        assertEquals("""
                # HELP fleet_rank_up 1 while the rank's process runs, 0 once it has ended.
                # TYPE fleet_rank_up gauge
                fleet_rank_up{rank="0"} 1
                fleet_rank_up{rank="1"} 1
                """, metrics(new ProcessState(Role.Kind.TRAINER, 0, true, 0), new ProcessState(Role.Kind.TRAINER, 1, true, 0)).render());
        assertEquals("", metrics().render());
    }

    @Test
    void valuesAreWrittenAsPrometheusReadsThem() {
        assertEquals("3", JobMetrics.number(3.0));
        assertEquals("-2", JobMetrics.number(-2.0));
        assertEquals("0.25", JobMetrics.number(0.25));
        assertEquals("1.0e20", JobMetrics.number(1e20));
        assertEquals("NaN", JobMetrics.number(Double.NaN));
        assertEquals("+Inf", JobMetrics.number(Double.POSITIVE_INFINITY));
        assertEquals("-Inf", JobMetrics.number(Double.NEGATIVE_INFINITY));
    }
}
