package org.fleet4j.fleet.metrics;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The figures a rank reports to its launcher ({@link RankMetrics}), by their names on the launcher's Prometheus
 * endpoint, where each gets the label {@code rank="N"}. A gauge holds the last step's value; a counter grows over the
 * whole run. Times are in seconds, as Prometheus names them.
 */
public enum RankMetric {
    STEPS("fleet_rank_steps_total", true, "Training steps the rank has finished."),
    SAMPLES("fleet_rank_samples_total", true, "Samples (rows) the rank has trained on."),
    STEP_SECONDS("fleet_rank_step_seconds", false, "Wall time of the rank's last step."),
    STEP_SECONDS_TOTAL("fleet_rank_step_seconds_total", true, "Wall time of all the rank's steps."),
    SAMPLES_PER_SECOND("fleet_rank_samples_per_second", false, "The rank's samples per second in its last step."),
    LOSS("fleet_rank_loss", false, "The training loss of the last step."),
    ALLREDUCE_SECONDS("fleet_rank_allreduce_seconds", false,
            "Time of the last step in collective ops: gradient allreduces, and the waits for overlapped ones."),
    ALLREDUCE_SECONDS_TOTAL("fleet_rank_allreduce_seconds_total", true, "Time of all steps in collective ops."),
    PS_PULL_SECONDS("fleet_rank_ps_pull_seconds", false, "Time of the last step in parameter-server pulls."),
    PS_PULL_SECONDS_TOTAL("fleet_rank_ps_pull_seconds_total", true, "Time of all steps in parameter-server pulls."),
    PS_PUSH_SECONDS("fleet_rank_ps_push_seconds", false,
            "Time of the last step in parameter-server pushes and the send barrier after them."),
    PS_PUSH_SECONDS_TOTAL("fleet_rank_ps_push_seconds_total", true,
            "Time of all steps in parameter-server pushes and send barriers."),
    PS_SEND_QUEUE_DEPTH("fleet_rank_ps_send_queue_depth", false,
            "Gradients queued on this worker for the parameter servers, not yet taken by them (async and half-async modes)."),
    PS_KEYS_PER_SECOND("fleet_rank_ps_keys_per_second", false, "Sparse keys per second this worker pulled and pushed in its last step.");

    private static final Map<String, RankMetric> BY_NAME = Arrays.stream(values())
            .collect(Collectors.toUnmodifiableMap(RankMetric::exposedName, Function.identity()));

    private final String exposedName;
    private final boolean counter;
    private final String help;

    RankMetric(String exposedName, boolean counter, String help) {
        this.exposedName = exposedName;
        this.counter = counter;
        this.help = help;
    }

    /** The name on the endpoint, also the key of the rank's metrics file. */
    public String exposedName() {
        return exposedName;
    }

    /** Prometheus's type: counter or gauge. */
    public String type() {
        return counter ? "counter" : "gauge";
    }

    public String help() {
        return help;
    }

    /** The metric of that name, or null. */
    public static RankMetric byName(String exposedName) {
        return BY_NAME.get(exposedName);
    }
}
