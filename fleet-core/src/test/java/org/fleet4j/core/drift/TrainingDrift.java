package org.fleet4j.core.drift;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * How far two trainings of one model are apart: the largest absolute difference within every parameter tensor, and
 * the difference of the loss at every step, each next to the size of the reference's values.
 *
 * <p>Two float32 trainings that are both correct but add in different orders (one rank against several, one executor
 * against another) are never bit-equal: a ReLU input that rounds to the other side of zero sends them apart, and the
 * gap grows. A fixed tolerance is then either too tight on some CPU or too loose to see a mistake. So a difference is
 * judged against the float32 noise of the same training, measured as the drift between the reference and a copy
 * started {@linkplain RoundingNoise one ulp away}: {@link #ratioTo} says how many times that noise a difference is, per
 * parameter and per step, and {@link #beyond} names what exceeds a chosen multiple.
 */
public final class TrainingDrift {
    /**
     * The least unit a difference is measured in, in float32 ulps of the reference's largest value: where the noise run
     * happened to stay within an ulp or two, a run that rounded a few steps differently is not a mistake.
     */
    public static final int FLOOR_ULPS = 8;
    /**
     * How many times the noise a correct run may differ, as the tests use it. Measured on mnist (seeds 1-4, 50 SGD
     * steps, scripts/equivalence/measure.sh; docs/FLEET.md, "How equivalence is tested"): correct 2- and 4-rank runs
     * came within 1.0 times the noise of a one-ulp start, while the smallest mistake, a 1% learning-rate error, reached
     * 52 times it (8 times in the parameters alone). 4 leaves 4 times headroom above the one and 13 below the other.
     */
    public static final double NOISE_FACTOR = 4;

    private final Map<String, Double> parameters;
    private final Map<String, Double> parameterScales;
    private final double[] losses;
    private final double[] lossScales;

    private TrainingDrift(Map<String, Double> parameters, Map<String, Double> parameterScales, double[] losses,
                          double[] lossScales) {
        this.parameters = parameters;
        this.parameterScales = parameterScales;
        this.losses = losses;
        this.lossScales = lossScales;
    }

    /** The drift of {@code other} from {@code reference}; fails naming what differs when they do not hold the same things. */
    public static TrainingDrift between(TrainingRecord reference, TrainingRecord other) {
        Set<String> names = reference.parameters().keySet();
        if (!names.equals(other.parameters().keySet())) {
            throw new IllegalArgumentException("the runs hold different parameters: " + names + " against "
                    + other.parameters().keySet());
        }
        Map<String, Double> drift = new LinkedHashMap<>();
        Map<String, Double> scale = new LinkedHashMap<>();
        for (String name : names) {
            float[] a = reference.parameters().get(name);
            float[] b = other.parameters().get(name);
            if (a.length != b.length) {
                throw new IllegalArgumentException(name + " has " + a.length + " values in one run and " + b.length
                        + " in the other");
            }
            double largest = 0;
            double magnitude = 0;
            for (int i = 0; i < a.length; i++) {
                largest = Math.max(largest, Math.abs((double) a[i] - b[i]));
                magnitude = Math.max(magnitude, Math.abs(a[i]));
            }
            drift.put(name, largest);
            scale.put(name, magnitude);
        }
        double[] la = reference.losses();
        double[] lb = other.losses();
        if (la.length != lb.length) {
            throw new IllegalArgumentException("the runs took " + la.length + " and " + lb.length + " steps");
        }
        double[] lossDrift = new double[la.length];
        double[] lossScale = new double[la.length];
        for (int s = 0; s < la.length; s++) {
            lossDrift[s] = Math.abs(la[s] - lb[s]);
            lossScale[s] = Math.abs(la[s]);
        }
        return new TrainingDrift(drift, scale, lossDrift, lossScale);
    }

    /** The largest absolute difference within each parameter tensor, by name. */
    public Map<String, Double> parameters() {
        return Map.copyOf(parameters);
    }

    /** The absolute difference of the loss at each step. */
    public double[] losses() {
        return losses.clone();
    }

    /**
     * How many times the float32 {@code noise} each difference is, by parameter name and by "step N" (from 1); the
     * largest is the verdict. The unit for a parameter is the noise's drift of that parameter; for a step it is the
     * noise's largest loss drift over the whole run, because the runs part at discrete events (a ReLU input rounding to
     * the other side of zero) that come at different steps in different runs. Each unit is at least one float32 ulp of
     * the reference's value, so what the noise left bit-equal is not judged against zero.
     */
    public Map<String, Double> ratioTo(TrainingDrift noise) {
        if (!noise.parameters.keySet().equals(parameters.keySet()) || noise.losses.length != losses.length) {
            throw new IllegalArgumentException("the noise run is of another training: parameters " + noise.parameters.keySet()
                    + " over " + noise.losses.length + " steps, against " + parameters.keySet() + " over " + losses.length);
        }
        Map<String, Double> ratios = new LinkedHashMap<>();
        for (var e : parameters.entrySet()) {
            double unit = Math.max(noise.parameters.get(e.getKey()), FLOOR_ULPS * Math.ulp((float) (double) parameterScales.get(e.getKey())));
            ratios.put(e.getKey(), e.getValue() / unit);
        }
        double envelope = 0;
        for (double d : noise.losses) {
            envelope = Math.max(envelope, d);
        }
        for (int s = 0; s < losses.length; s++) {
            ratios.put("step " + (s + 1), losses[s] / Math.max(envelope, FLOOR_ULPS * Math.ulp((float) lossScales[s])));
        }
        return ratios;
    }

    /** The largest of {@link #ratioTo}: how many times the noise this drift is at its worst. */
    public double worstRatioTo(TrainingDrift noise) {
        return ratioTo(noise).values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    /** One line per parameter or step whose drift exceeds {@code factor} times the noise; empty when none does. */
    public List<String> beyond(TrainingDrift noise, double factor) {
        List<String> lines = new ArrayList<>();
        Map<String, Double> ratios = ratioTo(noise);
        for (var e : ratios.entrySet()) {
            if (!(e.getValue() <= factor)) {
                String key = e.getKey();
                double drift = key.startsWith("step ") ? losses[Integer.parseInt(key.substring(5)) - 1] : parameters.get(key);
                lines.add(String.format(Locale.ROOT, "%s: differs by %.3g, %.1f times the float32 noise (allowed %.1f)",
                        key.startsWith("step ") ? "the loss of " + key : key, drift, e.getValue(), factor));
            }
        }
        return lines;
    }

    /** For reports: the worst parameter and the worst step with their ratios to the noise. */
    public String summaryAgainst(TrainingDrift noise) {
        Map<String, Double> ratios = ratioTo(noise);
        StringBuilder s = new StringBuilder();
        ratios.entrySet().stream().filter(e -> !e.getKey().startsWith("step ")).max(Map.Entry.comparingByValue())
                .ifPresent(p -> s.append(String.format(Locale.ROOT, "parameters at most %.2f x noise (%s, max abs %.3g)",
                        p.getValue(), p.getKey(), parameters.get(p.getKey()))));
        ratios.entrySet().stream().filter(e -> e.getKey().startsWith("step ")).max(Map.Entry.comparingByValue())
                .ifPresent(l -> s.append(s.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT,
                        "loss at most %.2f x noise (%s)", l.getValue(), l.getKey())));
        return s.toString();
    }
}
