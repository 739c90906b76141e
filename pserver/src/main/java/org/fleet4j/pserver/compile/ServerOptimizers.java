package org.fleet4j.pserver.compile;

import org.fleet4j.core.ir.Op;
import org.fleet4j.pserver.table.ServerOptimizer;

/**
 * The server-side optimizer that does what a worker's optimizer op did, with the op's own hyper-parameters (its
 * attributes, defaults filled in by the op's spec) and the learning rate of its schedule, which the servers keep
 * constant.
 */
final class ServerOptimizers {
    private ServerOptimizers() {
    }

    static ServerOptimizer of(Op op, String param, float lr) {
        return switch (op.type()) {
            case "sgd" -> new ServerOptimizer.Sgd(lr, op.floatAttr("weight_decay"));
            case "momentum" -> new ServerOptimizer.Momentum(lr, op.floatAttr("mu"), op.boolAttr("use_nesterov"),
                    op.floatAttr("weight_decay"));
            case "adagrad" -> new ServerOptimizer.Adagrad(lr, op.floatAttr("epsilon"),
                    op.floatAttr("initial_accumulator_value"));
            case "adam" -> new ServerOptimizer.Adam(lr, op.floatAttr("beta1"), op.floatAttr("beta2"),
                    op.floatAttr("epsilon"));
            default -> throw new PsCompileException("optimizer op " + op.type() + " (parameter " + param
                    + ") cannot run on the parameter servers, which run sgd, momentum, adagrad and adam; use one of"
                    + " those, or train in mode collective");
        };
    }
}
