package org.fleet4j.core.ir;

/**
 * Weight decay of one parameter (Paddle's {@code L2Decay} and {@code L1Decay}, given through
 * {@code ParamAttr.withRegularizer}): the optimizer adds {@code coeff * param} (L2) or {@code coeff * sign(param)} (L1)
 * to the parameter's gradient before any update, as ops of the program, so it works with every optimizer and, in data
 * parallelism, acts on the averaged gradient (the allreduces come before it). Kept on the parameter's {@link Var}.
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

    /** "L2Decay(1.0E-4)", as Paddle spells it. */
    @Override
    public String toString() {
        return kind + "Decay(" + coeff + ")";
    }
}
