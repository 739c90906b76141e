package org.fleet4j.fleet.metrics;

import java.util.function.LongSupplier;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.fleet.metrics.CommunicationTimes.Kind;
import org.fleet4j.fleet.tensorboard.SummaryWriter;
import org.fleet4j.pserver.worker.AsyncCommunicator;
import org.fleet4j.pserver.worker.PsCommunicator;

/**
 * What a training program reports once per step, sent where the user asked for it: to TensorBoard (a
 * {@link SummaryWriter}, rank 0's under {@code --tensorboard}) and to the launcher's Prometheus endpoint
 * ({@link RankMetrics}, when fleetrun runs with {@code --metrics_port}). A step lasts from {@link #stepStarted()}, or
 * else from the end of the step before, to {@link #stepFinished}; both are called from the thread that runs the steps.
 * On the CPU the runner's executor is also timed in
 * its communication ops ({@link CommunicationTimes}); with neither destination nothing is measured or attached, so a
 * run that asks for no metrics pays nothing.
 *
 * <p>TensorBoard tags: {@code train/loss}, {@code train/learning_rate}, {@code train/samples_per_sec} (the whole
 * job's), {@code train/step_time_ms}, and where the program has them {@code train/allreduce_ms},
 * {@code train/ps_pull_ms} and {@code train/ps_push_ms}; programs add their own with {@link #scalar}.
 */
public final class StepMetrics implements AutoCloseable {
    private final SummaryWriter tensorboard;
    private final RankMetrics rank;
    private final CommunicationTimes communication;
    private final LongSupplier clock;
    private final long[] communicationAtStart = new long[Kind.values().length];
    private LrSchedule schedule;
    private long startedAt;

    /**
     * @param tensorboardOrNull where this rank's scalars go (closed with this), or null: none
     * @param runnerOrNull the runner of the training program, whose executor is timed when it runs on the CPU, or null
     */
    public static StepMetrics open(SummaryWriter tensorboardOrNull, ProgramRunner runnerOrNull) {
        return open(tensorboardOrNull, runnerOrNull instanceof CpuProgramRunner cpu ? cpu.executor() : null);
    }

    /** As {@link #open(SummaryWriter, ProgramRunner)}, timing {@code executorOrNull}. */
    public static StepMetrics open(SummaryWriter tensorboardOrNull, Executor executorOrNull) {
        RankMetrics rank = RankMetrics.fromEnvironment(System.getenv());
        CommunicationTimes communication = null;
        if ((tensorboardOrNull != null || rank.reporting()) && executorOrNull != null) {
            communication = new CommunicationTimes(System::nanoTime);
            executorOrNull.addObserver(communication);
            executorOrNull.context().service(PsCommunicator.class)
                    .filter(AsyncCommunicator.class::isInstance).map(AsyncCommunicator.class::cast)
                    .ifPresent(queue -> rank.sample(RankMetric.PS_SEND_QUEUE_DEPTH, queue::pending));
        }
        return new StepMetrics(tensorboardOrNull, rank, communication, System::nanoTime);
    }

    /** {@code communicationOrNull}: the observer of the training program's executor, if it has one. */
    StepMetrics(SummaryWriter tensorboardOrNull, RankMetrics rank, CommunicationTimes communicationOrNull,
                LongSupplier clock) {
        this.tensorboard = tensorboardOrNull;
        this.rank = rank;
        this.communication = communicationOrNull;
        this.clock = clock;
        this.startedAt = clock.getAsLong();
    }

    /** Whether anyone reads these figures: TensorBoard or the launcher. */
    public boolean wanted() {
        return tensorboard != null || rank.reporting();
    }

    /** Reports {@code schedule}'s learning rate at every step as {@code train/learning_rate}. */
    public StepMetrics learningRate(LrSchedule schedule) {
        this.schedule = schedule;
        return this;
    }

    /** Starts a step's clock, leaving out of it what ran since the last step (a test, a checkpoint). */
    public void stepStarted() {
        if (!wanted()) {
            return;
        }
        startedAt = clock.getAsLong();
        if (communication != null) {
            for (Kind k : Kind.values()) {
                communicationAtStart[k.ordinal()] = communication.nanos(k);
            }
        }
    }

    /**
     * Reports step {@code step} (from 1) as finished.
     *
     * @param loss the step's loss, NaN when the program has none
     * @param rankSamples the samples (rows) this rank trained on in the step; 0 when the program counts none
     * @param jobSamples the samples of the whole job in the step, for TensorBoard's samples/s
     */
    public void stepFinished(long step, double loss, long rankSamples, long jobSamples) {
        if (!wanted()) {
            return;
        }
        long now = clock.getAsLong();
        double seconds = Math.max(0, now - startedAt) / 1e9;
        startedAt = now;
        rank.add(RankMetric.STEPS, 1);
        rank.add(RankMetric.STEP_SECONDS_TOTAL, seconds);
        rank.set(RankMetric.STEP_SECONDS, seconds);
        scalar("train/step_time_ms", seconds * 1e3, step);
        if (!Double.isNaN(loss)) {
            rank.set(RankMetric.LOSS, loss);
            scalar("train/loss", loss, step);
        }
        if (schedule != null) {
            scalar("train/learning_rate", schedule.at(step - 1), step);
        }
        if (rankSamples > 0) {
            rank.add(RankMetric.SAMPLES, rankSamples);
            if (seconds > 0) {
                rank.set(RankMetric.SAMPLES_PER_SECOND, rankSamples / seconds);
            }
        }
        if (jobSamples > 0 && seconds > 0) {
            scalar("train/samples_per_sec", jobSamples / seconds, step);
        }
        if (communication != null) {
            report(Kind.ALLREDUCE, RankMetric.ALLREDUCE_SECONDS, RankMetric.ALLREDUCE_SECONDS_TOTAL, "train/allreduce_ms", step);
            report(Kind.PS_PULL, RankMetric.PS_PULL_SECONDS, RankMetric.PS_PULL_SECONDS_TOTAL, "train/ps_pull_ms", step);
            report(Kind.PS_PUSH, RankMetric.PS_PUSH_SECONDS, RankMetric.PS_PUSH_SECONDS_TOTAL, "train/ps_push_ms", step);
        }
    }

    /** The step's time in ops of {@code kind}; nothing for a kind the program has never run. */
    private void report(Kind kind, RankMetric last, RankMetric total, String tag, long step) {
        long sofar = communication.nanos(kind);
        long inStep = sofar - communicationAtStart[kind.ordinal()];
        communicationAtStart[kind.ordinal()] = sofar;
        if (communication.ops(kind) == 0) {
            return;
        }
        rank.set(last, inStep / 1e9);
        rank.add(total, inStep / 1e9);
        scalar(tag, inStep / 1e6, step);
    }

    /** A scalar of the program's own (test AUC, accuracy) for TensorBoard, when it writes. */
    public void scalar(String tag, double value, long step) {
        if (tensorboard != null) {
            tensorboard.addScalar(tag, value, step);
        }
    }

    /** A figure of the program's own for the launcher's endpoint. */
    public void set(RankMetric metric, double value) {
        rank.set(metric, value);
    }

    /** Closes the event file and writes the launcher's figures a last time. */
    @Override
    public void close() {
        try {
            rank.close();
        } finally {
            if (tensorboard != null) {
                tensorboard.close();
            }
        }
    }
}
