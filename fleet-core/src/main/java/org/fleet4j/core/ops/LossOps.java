package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** softmax over the last axis, and softmax_with_cross_entropy against integer labels, with gradients. */
@AutoService(OpLibrary.class)
public final class LossOps implements OpLibrary {
    public static final String SOFTMAX = "softmax";
    public static final String SOFTMAX_WITH_CROSS_ENTROPY = "softmax_with_cross_entropy";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(SOFTMAX)
                .in("X").out("Out")
                .shape(ctx -> {
                    ctx.requireFloat("X");
                    if (ctx.shape("X").length < 1) {
                        throw ctx.fail("X must have at least one dimension");
                    }
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.outLike("Out", x);
                    long c = x.dim(-1);
                    softmaxRows(x.segment(), out.segment(), x.numel() / c, c);
                })
                .gradKernel(op -> a -> {
                    Tensor out = a.in("Out");
                    Tensor g = a.in("Out@GRAD");
                    Tensor gx = a.outLike("X@GRAD", out);
                    long c = out.dim(-1);
                    long rows = out.numel() / c;
                    MemorySegment o = out.segment();
                    MemorySegment gs = g.segment();
                    MemorySegment gxs = gx.segment();
                    for (long r = 0; r < rows; r++) {
                        long base = r * c;
                        double dot = 0;
                        for (long j = 0; j < c; j++) {
                            dot += F32.get(o, base + j) * F32.get(gs, base + j);
                        }
                        for (long j = 0; j < c; j++) {
                            F32.set(gxs, base + j, (float) (F32.get(o, base + j) * (F32.get(gs, base + j) - dot)));
                        }
                    }
                })
                .build());

        specs.add(OpSpec.builder(SOFTMAX_WITH_CROSS_ENTROPY)
                .in("Logits", "Label").out("Softmax", "Loss")
                .noGrad("Label")
                .attr("ignore_index", AttrType.INT, -100)
                .shape(ctx -> {
                    ctx.requireFloat("Logits");
                    ctx.requireInteger("Label");
                    long[] l = ctx.shape("Logits");
                    long[] y = ctx.shape("Label");
                    if (l.length < 2) {
                        throw ctx.fail("Logits must be [batch, classes]");
                    }
                    boolean labelFits = (y.length == l.length && y[y.length - 1] == 1) || y.length == l.length - 1;
                    if (!labelFits) {
                        throw ctx.fail("Label must be [batch, 1] or [batch] for Logits [batch, classes]");
                    }
                    long[] loss = l.clone();
                    loss[loss.length - 1] = 1;
                    ctx.set("Softmax", ctx.dtype("Logits"), l);
                    ctx.set("Loss", ctx.dtype("Logits"), loss);
                })
                .kernel(op -> {
                    int ignore = op.intAttr("ignore_index");
                    return a -> {
                        Tensor logits = a.in("Logits");
                        Tensor label = a.in("Label");
                        long c = logits.dim(-1);
                        long rows = logits.numel() / c;
                        checkLabels(label, rows, c, ignore);
                        Tensor sm = a.outLike("Softmax", logits);
                        long[] ls = logits.shape();
                        ls[ls.length - 1] = 1;
                        Tensor loss = a.out("Loss", logits.dtype(), ls);
                        softmaxRows(logits.segment(), sm.segment(), rows, c);
                        for (long r = 0; r < rows; r++) {
                            long y = label.getLong(r);
                            loss.setFloat(r, y == ignore ? 0f
                                    : (float) -Math.log(Math.max(sm.getFloat(r * c + y), 1e-30f)));
                        }
                    };
                })
                .gradKernel(op -> {
                    int ignore = op.intAttr("ignore_index");
                    return a -> {
                        Tensor sm = a.in("Softmax");
                        Tensor label = a.in("Label");
                        Tensor g = a.in("Loss@GRAD");
                        Tensor gx = a.outLike("Logits@GRAD", sm);
                        long c = sm.dim(-1);
                        long rows = sm.numel() / c;
                        MemorySegment s = sm.segment();
                        MemorySegment gxs = gx.segment();
                        for (long r = 0; r < rows; r++) {
                            long y = label.getLong(r);
                            float gr = y == ignore ? 0f : g.getFloat(r);
                            long base = r * c;
                            for (long j = 0; j < c; j++) {
                                F32.set(gxs, base + j, gr * F32.get(s, base + j));
                            }
                            if (y != ignore) {
                                F32.set(gxs, base + y, F32.get(gxs, base + y) - gr);
                            }
                        }
                    };
                })
                .build());
        return specs;
    }

    static void checkLabels(Tensor label, long rows, long classes, int ignore) {
        if (label.numel() != rows) {
            throw new IllegalArgumentException("Label has " + label.numel() + " entries for " + rows + " rows of logits");
        }
        for (long r = 0; r < rows; r++) {
            long y = label.getLong(r);
            if ((y < 0 || y >= classes) && y != ignore) {
                throw new IllegalArgumentException("label " + y + " at row " + r + " is outside [0, " + classes + ")");
            }
        }
    }

    /** Numerically stable softmax of each row. */
    static void softmaxRows(MemorySegment x, MemorySegment out, long rows, long c) {
        for (long r = 0; r < rows; r++) {
            long base = r * c;
            float max = Float.NEGATIVE_INFINITY;
            for (long j = 0; j < c; j++) {
                max = Math.max(max, F32.get(x, base + j));
            }
            double sum = 0;
            for (long j = 0; j < c; j++) {
                float e = (float) Math.exp(F32.get(x, base + j) - max);
                F32.set(out, base + j, e);
                sum += e;
            }
            float inv = (float) (1.0 / sum);
            for (long j = 0; j < c; j++) {
                F32.set(out, base + j, F32.get(out, base + j) * inv);
            }
        }
    }

}
