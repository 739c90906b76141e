package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.List;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * clip_by_global_norm (the ops of Paddle's ClipGradByGlobalNorm in one): the global norm of all the gradients of X,
 * sqrt(sum of every element squared), and each gradient scaled in place (Out names X's vars) by clip_norm /
 * max(global norm, clip_norm), so they are left alone when the norm is within clip_norm. GlobalNorm, when given,
 * receives the norm before clipping. The optimizer appends it after backward and, with data parallelism, after the
 * gradients' allreduces, so every rank clips the same summed gradients.
 */
@AutoService(OpLibrary.class)
public final class ClipOps implements OpLibrary {
    public static final String CLIP_BY_GLOBAL_NORM = "clip_by_global_norm";

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(CLIP_BY_GLOBAL_NORM)
                .variadicIn("X").out("Out").optionalOut("GlobalNorm")
                .attr("clip_norm", AttrType.FLOAT, null)
                .shape(ctx -> {
                    float clip = ctx.op().floatAttr("clip_norm");
                    if (!(clip > 0) || !Float.isFinite(clip)) {
                        throw ctx.fail("clip_norm must be a positive number, is " + clip);
                    }
                    if (!ctx.op().output("Out").equals(ctx.op().input("X"))) {
                        throw ctx.fail("Out must name the vars of X (the gradients are clipped in place)");
                    }
                    for (int j = 0; j < ctx.count("X"); j++) {
                        var g = ctx.input("X", j);
                        if (g.kind() == VarKind.SELECTED_ROWS || g.dtype() != DType.F32) {
                            throw ctx.fail("gradient " + g.name() + " is " + (g.kind() == VarKind.SELECTED_ROWS
                                    ? "sparse (an embedding with is_sparse=true); build that embedding with"
                                    + " is_sparse=false to clip it" : g.dtype().displayName() + "; clipping takes float32"));
                        }
                    }
                    ctx.set("GlobalNorm", DType.F32, 1);
                })
                .kernel(op -> {
                    float clip = op.floatAttr("clip_norm");
                    return a -> {
                        int n = a.inCount("X");
                        double sum = 0;
                        for (int j = 0; j < n; j++) {
                            Tensor g = a.in("X", j);
                            sum += squaredNorm(g.segment(), g.numel());
                        }
                        double norm = Math.sqrt(sum);
                        if (a.hasOut("GlobalNorm")) {
                            a.out("GlobalNorm", DType.F32, 1).setFloat(0, (float) norm);
                        }
                        float factor = (float) (clip / Math.max(norm, clip));
                        for (int j = 0; j < n; j++) {
                            Tensor g = a.in("X", j);
                            if (factor < 1f) {
                                F32.scale(g.segment(), factor, g.segment(), g.numel());
                            }
                            a.setOut("Out", j, g);
                        }
                    };
                })
                .build());
    }

    /** The sum of squares in double, of float vectors' partial sums (each vector's lanes add up a few thousand terms). */
    static double squaredNorm(MemorySegment s, long n) {
        double total = 0;
        long block = 4096;
        for (long from = 0; from < n; from += block) {
            long to = Math.min(n, from + block);
            FloatVector acc = FloatVector.zero(S);
            long bound = from + S.loopBound(to - from);
            for (long i = from; i < bound; i += S.length()) {
                FloatVector v = FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE);
                acc = acc.add(v.mul(v));
            }
            if (bound < to) {
                VectorMask<Float> m = S.indexInRange(bound, to);
                FloatVector v = FloatVector.fromMemorySegment(S, s, bound * Float.BYTES, NATIVE, m);
                acc = acc.add(v.mul(v));
            }
            total += acc.reduceLanes(VectorOperators.ADD);
        }
        return total;
    }
}
