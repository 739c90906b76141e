package org.fleet4j.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.Devices;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.device.ProgramRunners;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.ExecutionSettings;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.text.Quoted;

/** Pieces the built-in training programs share. */
final class Training {
    private Training() {
    }

    static Optimizer optimizer(String name, double lr) {
        if (!(lr > 0) || !Double.isFinite(lr)) {
            throw new IllegalArgumentException("--lr must be a positive number, got " + lr);
        }
        return switch (name) {
            case "sgd" -> new SGD(lr);
            case "momentum" -> new Momentum(LrSchedule.constant(lr), 0.9f, false, 0f);
            case "adam" -> new Adam(lr);
            case "adagrad" -> new Adagrad(lr);
            default -> throw new IllegalArgumentException("--optimizer must be sgd, momentum, adam or adagrad, got " + Quoted.of(name));
        };
    }

    /**
     * Keeps the parameters whose names match {@code pattern} out of training (no gradient, no update); call before
     * minimize. Returns their names; a pattern that is not a regular expression or matches nothing is refused.
     */
    static List<String> freeze(Program main, String pattern) {
        Pattern p;
        try {
            p = Pattern.compile(pattern);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("--freeze " + Quoted.of(pattern) + " is not a regular expression: " + e.getDescription());
        }
        List<String> all = new ArrayList<>();
        List<String> frozen = new ArrayList<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                all.add(v.name());
                if (p.matcher(v.name()).matches()) {
                    v.setStopGradient(true);
                    frozen.add(v.name());
                }
            }
        }
        if (frozen.isEmpty()) {
            throw new IllegalArgumentException("--freeze " + Quoted.of(pattern) + " matches no parameter; the parameters are " + all);
        }
        return frozen;
    }

    /** Moves every initial parameter {@code ulps} float32 ulps (see {@link RoundingNoise}), on whichever device holds it. */
    static void perturbParameters(ProgramRunner exe, Scope scope, Program main, int ulps, long seed) {
        exe.syncToScope(scope);
        RoundingNoise.perturbParameters(main, scope, ulps, seed);
        exe.scopeChanged();
    }

    /** The L2 norm over every trainable parameter of the program. */
    static double paramsL2(Program main, Scope scope) {
        double sq = 0;
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                Tensor t = scope.get(v.name());
                for (long i = 0; i < t.numel(); i++) {
                    double x = t.getDouble(i);
                    sq += x * x;
                }
            }
        }
        return Math.sqrt(sq);
    }

    /**
     * The runner of programs on this rank's device: the one fleetrun assigned through FLEET_DEVICE (--devices gpu,
     * --gpus 0,1), else the CPU, whose executor runs as the job's strategy says (threads, drop scope, iterations per
     * run). A device that cannot be used is the user's input error (exit 2), named with the reason.
     */
    static ProgramRunner runner(PrintStream out, String program, Fleet fleet) {
        String asked = System.getenv(Devices.DEVICE_ENV);
        ProgramRunner runner;
        try {
            runner = ProgramRunners.forThisProcess(ExecutionSettings.of(fleet.strategy()), fleet.execContext());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(Devices.DEVICE_ENV + "=" + asked + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(Devices.DEVICE_ENV + "=" + asked + " asks for a device this process cannot"
                    + " use: " + e.getMessage() + "; run on the CPU instead (without --devices gpu / --gpus)", e);
        }
        if (!(runner instanceof CpuProgramRunner)) {
            out.println(program + ": running on " + runner.device());
        }
        return runner;
    }

    /** The executor of a CPU runner, for the timeline; --timeline on another device is refused. */
    static Executor timelineExecutor(ProgramRunner runner) {
        if (runner instanceof CpuProgramRunner cpu) {
            return cpu.executor();
        }
        throw new IllegalArgumentException("--timeline records CPU runs only; " + runner.device().name()
                + " has no timeline yet (drop --timeline or run on the CPU)");
    }

    static Map<String, Tensor> feed(Mlp net, Tensor images, Tensor labels) {
        return Map.of(net.image().name(), images, net.label().name(), labels);
    }
}
