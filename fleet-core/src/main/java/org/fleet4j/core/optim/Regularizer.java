package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;

/**
 * Weight decay of one parameter (Paddle's {@code L2Decay} and {@code L1Decay}, given through
 * {@code ParamAttr.withRegularizer}): the optimizer adds {@code coeff * param} (L2) or {@code coeff * sign(param)} (L1)
 * to the parameter's gradient before any update, as ops of the program, so it works with every optimizer and, in data
 * parallelism, acts on the averaged gradient (the allreduces come before it).
 */
public record Regularizer(Kind kind, float coeff) {
    public enum Kind { L1, L2 }

    public Regularizer {
        if (kind == null) {
            throw new IllegalArgumentException("a regularizer needs a kind (L1 or L2)");
        }
        if (!Float.isFinite(coeff) || coeff < 0) {
            throw new IllegalArgumentException("the coefficient of " + kind + "Decay must be a finite number >= 0, got "
                    + coeff);
        }
    }

    /** Adds {@code coeff * param} to the gradient: the gradient of {@code coeff / 2 * sum(param^2)}. */
    public static Regularizer l2Decay(float coeff) {
        return new Regularizer(Kind.L2, coeff);
    }

    /** Adds {@code coeff * sign(param)} to the gradient: the gradient of {@code coeff * sum(abs(param))}. */
    public static Regularizer l1Decay(float coeff) {
        return new Regularizer(Kind.L1, coeff);
    }

    /**
     * Appends the decay of {@code pg}'s parameter to its gradient, in place (as Paddle does), so every op after it
     * (updates, and the passes that find gradients through them) sees the gradient's own name.
     */
    void appendTo(Block block, ParamGrad pg) {
        Var grad = block.var(pg.grad());
        if (grad.kind() == VarKind.SELECTED_ROWS) {
            throw new IrException("parameter " + pg.param() + " has the regularizer " + this + ", but its gradient "
                    + pg.grad() + " is sparse (an embedding with is_sparse=true), which a decay of the whole table"
                    + " would make dense; build that embedding with is_sparse=false, or drop its regularizer");
        }
        String term = pg.param();
        if (kind == Kind.L1) {
            term = unary(block, "sign", term, pg.param() + "@SIGN", Map.of());
        }
        term = unary(block, "scale", term, pg.param() + "@DECAY", Map.of("scale", coeff));
        block.appendOp("elementwise_add", Map.of("X", List.of(pg.grad()), "Y", List.of(term)),
                Map.of("Out", List.of(pg.grad())), Map.of());
    }

    private static String unary(Block block, String type, String x, String outPrefix, Map<String, Object> attrs) {
        String out = block.createTemp(outPrefix).name();
        block.appendOp(type, Map.of("X", List.of(x)), Map.of("Out", List.of(out)), attrs);
        return out;
    }

    /** "L2Decay(1.0E-4)", as Paddle spells it. */
    @Override
    public String toString() {
        return kind + "Decay(" + coeff + ")";
    }
}
