package org.fleet4j.pserver.compile;

import org.fleet4j.core.ir.Op;
import org.fleet4j.pserver.table.RowInitializer;

/**
 * The servers' initializer of a table from the startup op that initialised the parameter on the worker: the same
 * distribution with the op's seed. The values differ from the worker's random stream, since a server creates each
 * row from (seed, id, column) alone, wherever and whenever it is first pulled.
 */
final class ServerInitializers {
    private ServerInitializers() {
    }

    static RowInitializer of(Op op, String param) {
        return switch (op.type()) {
            case "fill_constant" -> RowInitializer.constant(op.floatAttr("value"));
            case "uniform_random" -> RowInitializer.uniform(op.floatAttr("min"), op.floatAttr("max"),
                    op.<Long>attr("seed"));
            case "gaussian_random" -> RowInitializer.normal(op.floatAttr("mean"), op.floatAttr("std"),
                    op.<Long>attr("seed"));
            default -> throw new PsCompileException("parameter " + param + " is initialised by startup op " + op.type()
                    + ", which the parameter servers cannot reproduce; initialise it with a constant, uniform or"
                    + " normal initializer");
        };
    }
}
