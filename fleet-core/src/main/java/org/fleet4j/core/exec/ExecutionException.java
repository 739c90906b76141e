package org.fleet4j.core.exec;

import java.util.List;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.core.tensor.Shapes;

/** A run that failed: a bad feed or fetch, or an op whose kernel rejected its inputs (named in the message). */
public class ExecutionException extends RuntimeException {
    public ExecutionException(String message) {
        super(message);
    }

    public ExecutionException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Why a var that an op reads before any op writes it has no value at the start of a run (every executor says it so). */
    public static ExecutionException noValue(Var v) {
        if (v.isData()) {
            return new ExecutionException("data var '" + v.name() + "' (" + v.dtype().displayName()
                    + Shapes.str(v.shape()) + ") was not fed");
        }
        if (v.persistable()) {
            return new ExecutionException("var '" + v.name() + "' is persistable but the scope has no value for it;"
                    + " run the startup program first (or load a checkpoint)");
        }
        return new ExecutionException("var '" + v.name() + "' is read before any op writes it");
    }

    /** Checks that {@code t} may be fed as {@code name}: a var of {@code block} of the same dtype and an accepted shape. */
    public static void checkFeed(Block block, String name, Tensor t) {
        Var v = block.findVar(name);
        if (v == null) {
            List<String> data = block.vars().stream().filter(Var::isData).map(Var::name).toList();
            throw new ExecutionException("feed '" + name + "' is not a var of the program (data vars: " + data + ")");
        }
        if (t.dtype() != v.dtype()) {
            throw new ExecutionException("feed '" + name + "' has dtype " + t.dtype().displayName() + ", the program expects "
                    + v.dtype().displayName());
        }
        if (!v.accepts(t.shape())) {
            throw new ExecutionException("feed '" + name + "' has shape " + Shapes.str(t.shape())
                    + ", the program expects " + Shapes.str(v.shape()) + " (-1 = any size)");
        }
    }
}
