package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * dropout: zeroes each element with probability dropout_prob. "upscale_in_train" scales the kept elements by
 * 1/(1-p) in training and passes X through at test time; "downgrade_in_infer" keeps them as they are in training
 * and scales by (1-p) at test time. Mask (float32, X's shape) holds the factor each element was multiplied by,
 * so the gradient is Out@GRAD * Mask. Each kernel has its own generator seeded from the seed attribute that
 * advances every step: the same program and seed draw the same masks.
 */
@AutoService(OpLibrary.class)
public final class DropoutOp implements OpLibrary {
    public static final String DROPOUT = "dropout";

    static final String UPSCALE = "upscale_in_train";
    static final String DOWNGRADE = "downgrade_in_infer";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(DROPOUT)
                .in("X").out("Out", "Mask")
                .attr("dropout_prob", AttrType.FLOAT, 0.5f)
                .attr("is_test", AttrType.BOOL, false)
                .attr("seed", AttrType.LONG, 0L)
                .attr("dropout_implementation", AttrType.STRING, UPSCALE)
                .shape(ctx -> {
                    ctx.requireFloat("X");
                    float p = ctx.op().floatAttr("dropout_prob");
                    if (!(p >= 0f && p <= 1f)) {
                        throw ctx.fail("dropout_prob must be in [0, 1], is " + p);
                    }
                    String impl = ctx.op().stringAttr("dropout_implementation");
                    if (!impl.equals(UPSCALE) && !impl.equals(DOWNGRADE)) {
                        throw ctx.fail("dropout_implementation '" + impl + "' is not " + UPSCALE + " or " + DOWNGRADE);
                    }
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                    ctx.set("Mask", DType.F32, ctx.shape("X"));
                })
                .kernel(op -> new Forward(op.floatAttr("dropout_prob"), op.boolAttr("is_test"), op.<Long>attr("seed"),
                        op.stringAttr("dropout_implementation").equals(UPSCALE)))
                .gradKernel(op -> a -> {
                    Tensor mask = a.in("Mask");
                    Tensor g = a.in("Out@GRAD");
                    Tensor gx = a.outLike("X@GRAD", g);
                    for (long i = 0; i < g.numel(); i++) {
                        gx.setFloat(i, g.getFloat(i) * mask.getFloat(i));
                    }
                })
                .build());
        return specs;
    }

    static final class Forward implements Kernel {
        private final float p;
        private final boolean isTest;
        private final boolean upscale;
        private final SplittableRandom random;

        Forward(float p, boolean isTest, long seed, boolean upscale) {
            this.p = p;
            this.isTest = isTest;
            this.upscale = upscale;
            this.random = new SplittableRandom(seed);
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor out = a.outLike("Out", x);
            Tensor mask = a.out("Mask", DType.F32, x.shape());
            MemorySegment ms = mask.segment();
            long n = x.numel();
            if (isTest) {
                mask.fill(upscale ? 1f : 1f - p);
            } else {
                float kept = upscale ? (p < 1f ? 1f / (1f - p) : 0f) : 1f;
                for (long i = 0; i < n; i++) {
                    F32.set(ms, i, random.nextDouble() < p ? 0f : kept);
                }
            }
            for (long i = 0; i < n; i++) {
                out.setFloat(i, x.getFloat(i) * F32.get(ms, i));
            }
        }
    }
}
