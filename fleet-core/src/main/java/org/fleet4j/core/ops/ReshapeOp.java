package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * reshape: Out is X with another shape, as a view over X's storage (no copy). Paddle's target convention: one
 * -1 is inferred, 0 copies X's dimension at the same position. The gradient is Out's gradient viewed with X's shape.
 */
@AutoService(OpLibrary.class)
public final class ReshapeOp implements OpLibrary {
    public static final String RESHAPE = "reshape";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(RESHAPE)
                .in("X").out("Out")
                .attr("shape", AttrType.LONGS, null)
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), inferShape(ctx, ctx.shape("X"), ctx.op().longsAttr("shape"))))
                .kernel(op -> {
                    long[] target = op.longsAttr("shape");
                    return a -> {
                        Tensor x = a.in("X");
                        try {
                            a.setOut("Out", x.reshape(target));
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException("X " + x.describe() + ": " + e.getMessage(), e);
                        }
                    };
                })
                .gradKernel(op -> a -> a.setOut("X@GRAD", a.in("Out@GRAD").reshape(a.in("X").shape())))
                .build());
        return specs;
    }

    /**
     * The build-time output shape. X may have unknown (-1) dimensions, typically the batch: when target copies
     * every unknown dimension with 0, its -1 can still be inferred; otherwise that -1 stays unknown.
     */
    static long[] inferShape(InferContext ctx, long[] x, long[] target) {
        int explicitUnknown = -1;
        for (int i = 0; i < target.length; i++) {
            if (target[i] < -1) {
                throw ctx.fail("shape " + Shapes.str(target) + " has a negative dimension other than -1 at " + i);
            }
            if (target[i] == 0 && i >= x.length) {
                throw ctx.fail("shape " + Shapes.str(target) + " copies dimension " + i + " (0), but X has rank " + x.length);
            }
            if (target[i] == -1) {
                if (explicitUnknown >= 0) {
                    throw ctx.fail("shape " + Shapes.str(target) + " has more than one -1");
                }
                explicitUnknown = i;
            }
        }
        boolean xKnown = true;
        for (long d : x) {
            xKnown &= d >= 0;
        }
        if (xKnown) {
            try {
                return Shapes.resolveReshape(x, target);
            } catch (IllegalArgumentException e) {
                throw ctx.fail(e.getMessage());
            }
        }
        long[] out = target.clone();
        boolean everyUnknownCopied = true;
        long xKnownProduct = 1;
        for (int i = 0; i < x.length; i++) {
            if (x[i] < 0) {
                everyUnknownCopied &= i < target.length && target[i] == 0;
            } else {
                xKnownProduct *= x[i];
            }
        }
        long targetKnownProduct = 1;
        for (int i = 0; i < out.length; i++) {
            if (out[i] == 0) {
                out[i] = x[i];
            }
            if (out[i] > 0 && !(target[i] == 0 && x[i] < 0)) {
                targetKnownProduct *= out[i];
            }
        }
        if (everyUnknownCopied) {
            if (explicitUnknown >= 0) {
                if (targetKnownProduct == 0 || xKnownProduct % targetKnownProduct != 0) {
                    throw ctx.fail("cannot reshape " + Shapes.str(x) + " to " + Shapes.str(target));
                }
                out[explicitUnknown] = xKnownProduct / targetKnownProduct;
            } else if (targetKnownProduct != xKnownProduct) {
                throw ctx.fail("cannot reshape " + Shapes.str(x) + " to " + Shapes.str(target)
                        + ": the known dimensions hold " + xKnownProduct + " vs " + targetKnownProduct + " elements");
            }
        }
        return out;
    }
}
