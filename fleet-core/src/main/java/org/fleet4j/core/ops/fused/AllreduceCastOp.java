package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.Casts;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code allreduce_cast}: Out = X converted to {@code out_dtype} (float32 or bfloat16, rounding to nearest even),
 * into Out's existing tensor when it has the shape, so a gradient restored from bfloat16 lands in its bucket view.
 */
@AutoService(OpLibrary.class)
public final class AllreduceCastOp implements OpLibrary {
    public static final String TYPE = "allreduce_cast";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(TYPE).in("X").out("Out")
                .attr("out_dtype", AttrType.STRING, null)
                .shape(ctx -> {
                    DType to = target(ctx.op().stringAttr("out_dtype"));
                    if (ctx.dtype("X") != DType.F32 && ctx.dtype("X") != DType.BF16) {
                        throw ctx.fail("X must be float32 or bfloat16");
                    }
                    ctx.set("Out", to, ctx.shape("X"));
                })
                .kernel(op -> {
                    DType to = target(op.stringAttr("out_dtype"));
                    return a -> {
                        Tensor x = a.in("X");
                        Casts.convert(x, a.out("Out", to, x.shape()));
                    };
                }).build());
        return specs;
    }

    private static DType target(String name) {
        DType d = DType.parse(name);
        if (d != DType.F32 && d != DType.BF16) {
            throw new IrException(TYPE + ": out_dtype '" + name + "' is not float32 or bfloat16");
        }
        return d;
    }
}
