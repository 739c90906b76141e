package org.fleet4j.core.ir;

import java.util.Arrays;
import java.util.Objects;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;

/**
 * A named variable of a block. Its shape may contain -1 for a dimension known only at run time (the batch).
 * Persistable variables (parameters, optimizer moments, counters) live in the Scope across runs; the rest are
 * temporaries owned by the executor.
 */
public final class Var {
    private final Block block;
    private final String name;
    private DType dtype;
    private long[] shape;
    private VarKind kind = VarKind.DENSE;
    private boolean persistable;
    private boolean parameter;
    private boolean stopGradient;
    private boolean isData;
    private Regularizer regularizer;

    Var(Block block, String name, DType dtype, long[] shape) {
        this.block = block;
        this.name = name;
        this.dtype = dtype;
        this.shape = shape.clone();
    }

    /** The block (and through it the program) this var belongs to. */
    public Block block() {
        return block;
    }

    public String name() {
        return name;
    }

    public DType dtype() {
        return dtype;
    }

    public long[] shape() {
        return shape.clone();
    }

    public VarKind kind() {
        return kind;
    }

    public boolean persistable() {
        return persistable;
    }

    /** A trainable parameter: persistable and updated by the optimizer. */
    public boolean isParameter() {
        return parameter;
    }

    public boolean stopGradient() {
        return stopGradient;
    }

    /** Fed by the user at every run. */
    public boolean isData() {
        return isData;
    }

    /** The weight decay the optimizer adds to this parameter's gradient; null for none. */
    public Regularizer regularizer() {
        return regularizer;
    }

    public Var setRegularizer(Regularizer r) {
        this.regularizer = r;
        return this;
    }

    public Var setDtype(DType d) {
        this.dtype = d;
        return this;
    }

    public Var setShape(long... s) {
        this.shape = s.clone();
        return this;
    }

    public Var setKind(VarKind k) {
        this.kind = k;
        return this;
    }

    public Var setPersistable(boolean p) {
        this.persistable = p;
        return this;
    }

    public Var setParameter(boolean p) {
        this.parameter = p;
        if (p) {
            this.persistable = true;
        }
        return this;
    }

    public Var setStopGradient(boolean s) {
        this.stopGradient = s;
        return this;
    }

    public Var setData(boolean d) {
        this.isData = d;
        if (d) {
            this.stopGradient = true;
        }
        return this;
    }

    /** Whether a run-time shape fits this declaration (-1 matches any size). */
    public boolean accepts(long[] actual) {
        if (actual.length != shape.length) {
            return false;
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] >= 0 && shape[i] != actual[i]) {
                return false;
            }
        }
        return true;
    }

    Var copyTo(Block target) {
        Var v = new Var(target, name, dtype, shape);
        v.kind = kind;
        v.persistable = persistable;
        v.parameter = parameter;
        v.stopGradient = stopGradient;
        v.isData = isData;
        v.regularizer = regularizer;
        return v;
    }

    boolean sameAs(Var o) {
        return name.equals(o.name) && dtype == o.dtype && Arrays.equals(shape, o.shape) && kind == o.kind
                && persistable == o.persistable && parameter == o.parameter && stopGradient == o.stopGradient
                && isData == o.isData && Objects.equals(regularizer, o.regularizer);
    }

    /** "fc_0.w_0 : float32[784, 512] param". */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(name).append(" : ").append(dtype.displayName()).append(Shapes.str(shape));
        if (kind == VarKind.SELECTED_ROWS) {
            sb.append(" selected_rows");
        }
        if (parameter) {
            sb.append(" param");
        } else if (persistable) {
            sb.append(" persistable");
        }
        if (regularizer != null) {
            sb.append(' ').append(regularizer);
        }
        if (isData) {
            sb.append(" data");
        } else if (stopGradient && !persistable) {
            sb.append(" stop_gradient");
        }
        return sb.toString();
    }
}
