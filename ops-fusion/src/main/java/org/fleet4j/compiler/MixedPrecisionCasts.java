package org.fleet4j.compiler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.fleet4j.core.amp.AmpOpLists;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;

/**
 * Appends ops to a block with casts around them so each op computes in the precision AMP chose for it: white ops in
 * the low dtype, black ops in float32, gray ops in the low dtype when an input already is (Paddle's rule), all of them
 * only where the op's kernel takes the low dtype on this device; everything else reads float32. A var is cast once per
 * dtype and the cast reused until the var is written again. Parameters are never changed: a white op reads a cast copy
 * ({@code w.cast_bf16}), so the float32 master weights stay what the optimizer updates.
 */
final class MixedPrecisionCasts {
    private final Block block;
    private final AmpOpLists lists;
    private final Set<String> lowPrecisionKernels;
    private final DType low;
    /** "var|dtype" -> the cast var that holds var in dtype. */
    private final Map<String, String> casts = new HashMap<>();
    private final Map<String, Integer> lowOps = new TreeMap<>();
    private final Map<String, Integer> whiteOpsKeptFp32 = new TreeMap<>();
    private int castOps;

    MixedPrecisionCasts(Block block, AmpOpLists lists, Set<String> lowPrecisionKernels, DType low) {
        this.block = block;
        this.lists = lists;
        this.lowPrecisionKernels = lowPrecisionKernels;
        this.low = low;
    }

    /** Appends {@code op}, casting its float inputs first where its precision needs another dtype. */
    void append(Op op) {
        DType target = runsLow(op) ? low : DType.F32;
        if (target == low) {
            lowOps.merge(op.type(), 1, Integer::sum);
        }
        OpSpec spec = OpRegistry.get(op.type());
        Op rewritten = new Op(op.type(), op.inputs(), op.outputs(), op.attrs());
        for (var e : op.inputs().entrySet()) {
            if (spec.isNoGradInput(e.getKey())) {
                continue; // labels and ids are no compute inputs
            }
            for (String in : e.getValue()) {
                DType d = block.var(in).dtype();
                if (d.isFloating() && d != target && (d == low || d == DType.F32)) {
                    rewritten.renameVar(in, castOf(in, target));
                }
            }
        }
        block.appendOp(rewritten.type(), rewritten.inputs(), rewritten.outputs(), rewritten.attrs());
        for (String out : op.allOutputs()) {
            casts.keySet().removeIf(k -> k.startsWith(out + "|"));
        }
    }

    /** The name of a var holding {@code var} in {@code dtype}, appending the cast the first time. */
    String castOf(String var, DType dtype) {
        return casts.computeIfAbsent(var + "|" + dtype, k -> {
            String name = var + ".cast_" + (dtype == DType.F32 ? "fp32" : dtype == DType.BF16 ? "bf16" : dtype.displayName());
            block.appendOp("cast", Map.of("X", List.of(var)), Map.of("Out", List.of(name)),
                    Map.of("out_dtype", dtype.displayName()));
            castOps++;
            return name;
        });
    }

    private boolean runsLow(Op op) {
        AmpOpLists.Precision p = lists.precisionOf(op.type());
        boolean kernel = lowPrecisionKernels.contains(op.type());
        if (p == AmpOpLists.Precision.REDUCED && !kernel) {
            whiteOpsKeptFp32.merge(op.type(), 1, Integer::sum);
        }
        return switch (p) {
            case REDUCED -> kernel;
            case FP32 -> false;
            case FOLLOW_INPUTS -> kernel && op.allInputs().stream().anyMatch(n -> block.var(n).dtype() == low);
        };
    }

    /** Op types that now compute in the low dtype, with counts. */
    Map<String, Integer> lowOps() {
        return lowOps;
    }

    /** White-listed op types kept in float32 because their kernel here has no low-precision version. */
    Map<String, Integer> whiteOpsKeptFp32() {
        return whiteOpsKeptFp32;
    }

    int castOps() {
        return castOps;
    }
}
