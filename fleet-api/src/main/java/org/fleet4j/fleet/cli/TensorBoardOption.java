package org.fleet4j.fleet.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.tensorboard.SummaryWriter;
import picocli.CommandLine.Option;

/**
 * The {@code --tensorboard DIR} option of every built-in program, one definition for all ({@code @Mixin}). Rank 0
 * writes the job's scalars to one event file in DIR, as PyTorch's and Horovod's examples do, so
 * {@code tensorboard --logdir DIR} shows the run once; the other ranks' own figures (step and communication times)
 * are on the launcher's endpoint ({@code fleetrun --metrics_port}). A folder that cannot be made or written is the
 * user's error (exit 2), named with the reason, before training starts.
 */
public final class TensorBoardOption {
    @Option(names = "--tensorboard", paramLabel = "DIR", description = "write TensorBoard event files (loss, learning"
            + " rate, samples/s, step and communication times) to DIR; rank 0 writes; view with tensorboard --logdir DIR")
    Path dir;

    /** The folder asked for, or null. */
    public Path dir() {
        return dir;
    }

    /** The step metrics of {@code rank}: to TensorBoard on rank 0 when asked, and to the launcher when it asks. */
    public StepMetrics open(int rank, ProgramRunner runner) {
        return StepMetrics.open(rank == 0 ? writer() : null, runner);
    }

    /** As {@link #open(int, ProgramRunner)}, for a program run by an executor of its own. */
    public StepMetrics open(int rank, Executor executor) {
        return StepMetrics.open(rank == 0 ? writer() : null, executor);
    }

    /** As {@link #open(int, ProgramRunner)}, for a program without an executor (nothing to time in its ops). */
    public StepMetrics open(int rank) {
        return StepMetrics.open(rank == 0 ? writer() : null, (Executor) null);
    }

    /** A new event file in the folder, or null without {@code --tensorboard}. */
    public SummaryWriter writer() {
        return writerIn(dir);
    }

    /** A new event file in {@code dir}, or null when it is null; for programs that parse their own command line. */
    public static SummaryWriter writerIn(Path dir) {
        if (dir == null) {
            return null;
        }
        try {
            return SummaryWriter.open(dir);
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalArgumentException("--tensorboard " + dir + ": cannot write TensorBoard event files there ("
                    + reason(e) + ")", e);
        }
    }

    private static String reason(Exception e) {
        Throwable cause = e instanceof UncheckedIOException u ? u.getCause() : e;
        return switch (cause) {
            case FileAlreadyExistsException exists -> exists.getFile() + " exists and is not a folder";
            case AccessDeniedException denied -> "permission denied on " + denied.getFile();
            case FileSystemException fs -> fs.getFile() + ": " + fs.getReason();
            default -> String.valueOf(cause.getMessage());
        };
    }
}
