package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code fused_bn_activation}: Y = relu(batch_norm(X)), one op with batch_norm's slots and attributes plus
 * {@code act_type}. Forward runs fleet-core's batch_norm kernel straight into Y and applies relu in place, so the
 * normalised tensor is never stored apart. The grad op takes Y and dY, forms relu's gradient in a buffer of its own
 * and hands it to batch_norm's grad kernel as its dY.
 */
@AutoService(OpLibrary.class)
public final class FusedBnActOp implements OpLibrary {
    public static final String TYPE = "fused_bn_activation";
    private static final String[] BN_GRAD_IN = {"X", "Scale", "SavedMean", "SavedVariance", "Y@GRAD"};
    private static final String[] BN_GRAD_OUT = {"X@GRAD", "Scale@GRAD", "Bias@GRAD"};

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(TYPE)
                .in("X", "Scale", "Bias", "Mean", "Variance")
                .out("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance")
                .noGrad("Mean", "Variance")
                .attr("momentum", AttrType.FLOAT, 0.9f)
                .attr("epsilon", AttrType.FLOAT, 1e-5f)
                .attr("is_test", AttrType.BOOL, false)
                .attr("data_layout", AttrType.STRING, "NCHW")
                .attr("act_type", AttrType.STRING, "relu")
                .shape(ctx -> {
                    if (!ctx.op().stringAttr("act_type").equals("relu")) {
                        throw ctx.fail("act_type '" + ctx.op().stringAttr("act_type") + "' is not supported; only relu");
                    }
                    ctx.set("Y", ctx.dtype("X"), ctx.shape("X"));
                    for (String s : new String[]{"MeanOut", "VarianceOut", "SavedMean", "SavedVariance"}) {
                        ctx.set(s, ctx.dtype("Mean"), ctx.shape("Mean"));
                    }
                })
                .kernel(FusedBnActOp::forward)
                .gradKernel(FusedBnActOp::backward)
                .build());
        return specs;
    }

    /** The batch_norm attributes of a fused op (everything but act_type). */
    static Map<String, Object> bnAttrs(Op op) {
        Map<String, Object> attrs = new LinkedHashMap<>(op.attrs());
        attrs.remove("act_type");
        return attrs;
    }

    private static Kernel forward(Op op, ExecContext context) {
        Kernel bn = OpRegistry.get("batch_norm").kernelFactory().create(new Op("batch_norm", op.inputs(), op.outputs(),
                bnAttrs(op)), context);
        return a -> {
            bn.run(a);
            Tensor y = (Tensor) a.outValue("Y", 0);
            VectorLoops.reluInPlace(y.segment(), y.numel());
        };
    }

    /** relu's gradient into a private buffer, then batch_norm's grad kernel on a frame of its own. */
    private static Kernel backward(Op op, ExecContext context) {
        Map<String, List<String>> in = new LinkedHashMap<>();
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String s : BN_GRAD_IN) {
            in.put(s, List.of(s));
        }
        for (String s : BN_GRAD_OUT) {
            if (!op.output(s).isEmpty()) {
                out.put(s, List.of(s));
            }
        }
        Op inner = new Op("batch_norm_grad", in, out, bnAttrs(op));
        Kernel bnGrad = OpRegistry.get("batch_norm_grad").kernelFactory().create(inner, context);
        String[] outSlots = out.keySet().toArray(String[]::new);
        int[][] inIdx = new int[BN_GRAD_IN.length][];
        for (int s = 0; s < inIdx.length; s++) {
            inIdx[s] = new int[]{s};
        }
        int[][] outIdx = new int[outSlots.length][];
        for (int s = 0; s < outIdx.length; s++) {
            outIdx[s] = new int[]{BN_GRAD_IN.length + s};
        }
        Object[] frame = new Object[BN_GRAD_IN.length + outSlots.length];
        KernelArgs innerArgs = new KernelArgs(inner, frame, BN_GRAD_IN, inIdx, outSlots, outIdx);
        return new Kernel() {
            private Tensor dNormed;

            @Override
            public void run(KernelArgs a) {
                Tensor y = a.in("Y");
                Tensor dy = a.in("Y@GRAD");
                if (dNormed == null || !dNormed.hasShape(dy.shape()) || dNormed.dtype() != dy.dtype()) {
                    dNormed = Tensor.zeros(dy.dtype(), dy.shape());
                }
                VectorLoops.addActGrad(VectorLoops.ActGrad.RELU, 1f, y.segment(), dy.segment(), dNormed.segment(), null,
                        1, checkedInt(dy.numel(), a));
                frame[0] = a.in("X");
                frame[1] = a.in("Scale");
                frame[2] = a.in("SavedMean");
                frame[3] = a.in("SavedVariance");
                frame[4] = dNormed;
                for (int s = 0; s < outSlots.length; s++) {
                    frame[BN_GRAD_IN.length + s] = a.outValue(outSlots[s], 0);
                }
                bnGrad.run(innerArgs);
                for (int s = 0; s < outSlots.length; s++) {
                    a.setOut(outSlots[s], frame[BN_GRAD_IN.length + s]);
                }
            }
        };
    }

    private static int checkedInt(long n, KernelArgs a) {
        if (n > Integer.MAX_VALUE) {
            throw new IrException(a.op().type() + ": Y (" + a.op().in("Y") + ") has more than 2^31 - 1 elements");
        }
        return (int) n;
    }
}
