package org.fleet4j.core.optim;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ops.ClipOps;

/**
 * Paddle's {@code ClipGradByGlobalNorm(clip_norm)}, an optimizer's {@code grad_clip}: when the global norm of all the
 * gradients (the square root of the sum of their squared elements) exceeds clipNorm, every gradient is scaled by
 * clipNorm / global norm. PyTorch's {@code clip_grad_norm_} scales by clipNorm / (norm + 1e-6) instead, a relative
 * difference of 1e-6 / norm.
 */
public record ClipGradByGlobalNorm(float clipNorm) {
    public ClipGradByGlobalNorm {
        if (!(clipNorm > 0) || !Float.isFinite(clipNorm)) {
            throw new IllegalArgumentException("ClipGradByGlobalNorm: clip_norm must be a positive number, is " + clipNorm);
        }
    }

    /** Appends the clip of {@code grads}' gradients, in place, to {@code block}. */
    void append(Block block, List<ParamGrad> grads) {
        List<String> names = grads.stream().map(ParamGrad::grad).toList();
        block.appendOp(ClipOps.CLIP_BY_GLOBAL_NORM, Map.of("X", names), Map.of("Out", names),
                Map.of("clip_norm", clipNorm));
    }
}
