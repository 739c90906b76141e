package org.fleet4j.core.exec;

import java.util.List;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.ControlOps;

/**
 * The executors' view of a conditional region: the ops between a {@code conditional_begin} and its
 * {@code conditional_end} run only when the begin's Cond is true. Shared by the CPU and GPU plans.
 */
public final class ConditionalBlocks {
    public static final String CONDITIONAL_BEGIN = ControlOps.BEGIN;
    public static final String CONDITIONAL_END = ControlOps.END;

    private ConditionalBlocks() {
    }

    /** The index of the conditional_end that closes the conditional_begin at {@code begin}; nesting is allowed. */
    public static int matchingEnd(List<Op> ops, int begin) {
        int depth = 0;
        for (int i = begin; i < ops.size(); i++) {
            String type = ops.get(i).type();
            if (type.equals(CONDITIONAL_BEGIN)) {
                depth++;
            } else if (type.equals(CONDITIONAL_END) && --depth == 0) {
                return i;
            }
        }
        throw new ExecutionException("op #" + begin + " " + CONDITIONAL_BEGIN + " has no matching " + CONDITIONAL_END);
    }
}
