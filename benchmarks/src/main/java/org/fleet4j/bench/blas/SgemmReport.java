package org.fleet4j.bench.blas;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.fleet4j.core.blas.Blas;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link FmaPeakBench} and {@link SgemmBench} in one go and prints a Markdown table: median time per
 * sgemm, GFLOPS, and each as a fraction of the FMA peak measured in the same run, plus the fastest single
 * invocation (the nearest to an unshared core). Arguments are JMH's (for example {@code -p shape=fc2.fwd}).
 */
public final class SgemmReport {

    private SgemmReport() {
    }

    public static void main(String[] args) throws RunnerException {
        Options cli;
        try {
            cli = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            System.err.println("SgemmReport: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.out.println(Blas.description());
        Options options = new OptionsBuilder().parent(cli)
                .include(FmaPeakBench.class.getName())
                .include(SgemmBench.class.getName())
                .build();
        Collection<RunResult> results = new Runner(options).run();

        double peak = Double.NaN;
        List<RunResult> gemms = new ArrayList<>();
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().startsWith(FmaPeakBench.class.getName())) {
                peak = FmaPeakBench.flops() / (median(r) * 1e3);
            } else {
                gemms.add(r);
            }
        }
        System.out.printf(Locale.ROOT, "%nFMA peak (FloatVector %d-bit, 1 thread): %.1f GFLOPS%n%n",
                FmaPeakBench.SPECIES.vectorBitSize(), peak);
        System.out.println("| product | shape | impl | median us | GFLOPS | of FMA peak | best us | best GFLOPS |");
        System.out.println("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |");
        for (RunResult r : gemms) {
            MlpShape s = MlpShape.named(r.getParams().getParam("shape"));
            double us = median(r);
            double best = r.getPrimaryResult().getStatistics().getMin();
            double gflops = s.flops() / (us * 1e3);
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %.1f | %.1f | %.0f%% | %.1f | %.1f |%n", s.name(),
                    s.product(), r.getParams().getParam("impl"), us, gflops, 100 * gflops / peak, best,
                    s.flops() / (best * 1e3));
        }
    }

    private static double median(RunResult r) {
        return r.getPrimaryResult().getStatistics().getPercentile(50);
    }
}
