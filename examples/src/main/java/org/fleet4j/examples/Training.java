package org.fleet4j.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.Devices;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.device.ProgramRunners;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adagrad;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.ClipGradByGlobalNorm;
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
     * The optimizer of a classifier program: sgd, momentum (0.9), adam, adagrad or adamw (betas 0.9, 0.999, epsilon
     * 1e-8) on {@code schedule}. {@code weightDecay} is L2 decay of every parameter for sgd and momentum (PyTorch's
     * SGD weight_decay) and decoupled decay of the parameters {@code decayed} accepts for adamw; adam and adagrad take
     * none. A positive {@code clipNorm} clips the gradients by their global norm.
     */
    static Optimizer optimizer(String name, LrSchedule schedule, double weightDecay, Predicate<String> decayed,
                               double clipNorm) {
        double lr = schedule.baseLr();
        if (!(lr > 0) || !Double.isFinite(lr)) {
            throw new IllegalArgumentException("--lr must be a positive number, got " + lr);
        }
        float wd = (float) weightDecay;
        Optimizer opt = switch (name) {
            case "sgd" -> new SGD(schedule, wd);
            case "momentum" -> new Momentum(schedule, 0.9f, false, wd);
            case "adamw" -> new AdamW(schedule, 0.9f, 0.999f, 1e-8f, wd, decayed);
            case "adam", "adagrad" -> {
                if (weightDecay != 0) {
                    throw new IllegalArgumentException("--weight_decay " + weightDecay + " with --optimizer " + name
                            + ": " + name + " takes no weight decay here; use --optimizer adamw for decoupled decay");
                }
                yield name.equals("adam") ? new Adam(schedule, 0.9f, 0.999f, 1e-8f, false) : new Adagrad(lr);
            }
            default -> throw new IllegalArgumentException("--optimizer must be sgd, momentum, adam, adamw or adagrad, got "
                    + Quoted.of(name));
        };
        if (name.equals("adagrad") && !schedule.decay().equals("constant")) {
            throw new IllegalArgumentException("--optimizer adagrad runs at a constant learning rate; drop --lr_schedule");
        }
        return clipNorm > 0 ? opt.withGradClip(new ClipGradByGlobalNorm((float) clipNorm)) : opt;
    }

    /**
     * The parameters that decoupled weight decay applies to, the usual recipe's: every weight of {@code program} but
     * the biases ({@code <layer>.b_<n>}) and batch norm's scale and shift.
     */
    static Predicate<String> decayedWeights(Program program) {
        Set<String> exempt = new HashSet<>();
        for (Op op : program.globalBlock().ops()) {
            if (op.type().equals("batch_norm")) {
                exempt.add(op.in("Scale"));
                exempt.add(op.in("Bias"));
            }
        }
        return name -> !exempt.contains(name) && !name.matches(".*\\.b_\\d+");
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

    static Map<String, Tensor> feed(Classifier net, Tensor images, Tensor labels) {
        return Map.of(net.image().name(), images, net.label().name(), labels);
    }
}
