import java.nio.file.Path;
import java.util.Locale;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.fleet.metrics.LossCurve;

/**
 * Prints how far mnist runs drift from a reference, as multiples of the float32 noise (see docs/FLEET.md, "How
 * equivalence is tested"). Each argument is a run folder holding ck.safetensors and loss_curve.csv: the reference,
 * the noise run (the reference with --perturb_init_ulps 1), then the runs to judge.
 */
public class DriftReport {
    static TrainingRecord record(String dir) {
        try {
            return TrainingRecord.of(SafeTensors.read(Path.of(dir, "ck.safetensors")),
                    LossCurve.readCsv(Path.of(dir, "loss_curve.csv")));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public static void main(String[] args) {
        TrainingRecord reference = record(args[0]);
        TrainingDrift noise = TrainingDrift.between(reference, record(args[1]));
        double noiseParams = noise.parameters().values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
        double noiseLoss = java.util.Arrays.stream(noise.losses()).max().orElse(0);
        System.out.printf(Locale.ROOT, "%s noise: parameters max abs %.3g, loss max abs %.3g%n", args[0], noiseParams, noiseLoss);
        for (int i = 2; i < args.length; i++) {
            TrainingDrift drift = TrainingDrift.between(reference, record(args[i]));
            System.out.printf(Locale.ROOT, "  %-28s worst %8.2f x noise: %s%n", args[i], drift.worstRatioTo(noise),
                    drift.summaryAgainst(noise));
        }
    }
}
