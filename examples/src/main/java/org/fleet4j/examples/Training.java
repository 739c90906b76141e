package org.fleet4j.examples;

import java.util.Map;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.Tensor;

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
            default -> throw new IllegalArgumentException("--optimizer must be sgd, momentum or adam, got '" + name + "'");
        };
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

    static Map<String, Tensor> feed(Mlp net, Tensor images, Tensor labels) {
        return Map.of(net.image().name(), images, net.label().name(), labels);
    }
}
