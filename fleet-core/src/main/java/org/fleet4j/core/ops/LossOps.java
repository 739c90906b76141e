package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Tensor;

/**
 * softmax_with_cross_entropy against integer labels, over the last axis of logits of any rank ([N, V], [N, T, V]):
 * per position, loss = (1 - eps) (-log p_label) + eps mean_j(-log p_j) with eps = label_smoothing (PyTorch's
 * cross_entropy(label_smoothing=eps), reduction 'none'); a position whose label is ignore_index has loss 0 and no
 * gradient.
 */
@AutoService(OpLibrary.class)
public final class LossOps implements OpLibrary {
    public static final String SOFTMAX_WITH_CROSS_ENTROPY = "softmax_with_cross_entropy";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(SOFTMAX_WITH_CROSS_ENTROPY)
                .in("Logits", "Label").out("Softmax", "Loss")
                .noGrad("Label")
                .attr("ignore_index", AttrType.INT, -100)
                .attr("label_smoothing", AttrType.FLOAT, 0f)
                .shape(ctx -> {
                    ctx.requireFloat("Logits");
                    ctx.requireInteger("Label");
                    long[] l = ctx.shape("Logits");
                    long[] y = ctx.shape("Label");
                    if (l.length < 2) {
                        throw ctx.fail("Logits must be [batch, classes] or [batch, ..., classes]");
                    }
                    boolean labelFits = (y.length == l.length && y[y.length - 1] == 1) || y.length == l.length - 1;
                    if (!labelFits) {
                        throw ctx.fail("Label must be Logits' shape with its last dimension 1 or dropped ([batch, 1] or"
                                + " [batch] for Logits [batch, classes])");
                    }
                    float eps = ctx.op().floatAttr("label_smoothing");
                    if (!(eps >= 0f && eps <= 1f)) {
                        throw ctx.fail("label_smoothing " + eps + " is outside [0, 1]");
                    }
                    long[] loss = l.clone();
                    loss[loss.length - 1] = 1;
                    ctx.set("Softmax", ctx.dtype("Logits"), l);
                    ctx.set("Loss", ctx.dtype("Logits"), loss);
                })
                .kernel(op -> {
                    int ignore = op.intAttr("ignore_index");
                    float eps = op.floatAttr("label_smoothing");
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
                        MemorySegment x = logits.segment();
                        MemorySegment s = sm.segment();
                        for (long r = 0; r < rows; r++) {
                            long y = label.getLong(r);
                            long base = r * c;
                            double logSumExp = Softmax.row(x, s, base, c, false);
                            if (y == ignore) {
                                loss.setFloat(r, 0f);
                                continue;
                            }
                            // -log p_j = logSumExp - x_j
                            double nll = logSumExp - F32.get(x, base + y);
                            if (eps > 0f) {
                                double meanX = F32.sum(x.asSlice(base * Float.BYTES, c * Float.BYTES), c) / c;
                                nll = (1 - eps) * nll + eps * (logSumExp - meanX);
                            }
                            loss.setFloat(r, (float) nll);
                        }
                    };
                })
                .gradKernel(op -> {
                    int ignore = op.intAttr("ignore_index");
                    float eps = op.floatAttr("label_smoothing");
                    return a -> {
                        Tensor sm = a.in("Softmax");
                        Tensor label = a.in("Label");
                        Tensor g = a.in("Loss@GRAD");
                        Tensor gx = a.outLike("Logits@GRAD", sm);
                        long c = sm.dim(-1);
                        long rows = sm.numel() / c;
                        MemorySegment s = sm.segment();
                        MemorySegment gxs = gx.segment();
                        float uniform = eps / c;
                        for (long r = 0; r < rows; r++) {
                            long y = label.getLong(r);
                            long base = r * c;
                            MemorySegment rowOut = gxs.asSlice(base * Float.BYTES, c * Float.BYTES);
                            if (y == ignore) {
                                rowOut.fill((byte) 0);
                                continue;
                            }
                            // d loss / d x_j = p_j - (1 - eps) [j = y] - eps / V
                            float gr = g.getFloat(r);
                            F32.scaleShift(s.asSlice(base * Float.BYTES, c * Float.BYTES), gr, -gr * uniform, rowOut, c);
                            F32.set(gxs, base + y, F32.get(gxs, base + y) - gr * (1 - eps));
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
}
