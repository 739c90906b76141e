package org.fleet4j.core.amp;

import java.util.HashSet;
import java.util.Set;

/**
 * Which ops run in reduced precision under AMP. White ops (GEMMs) gain from tensor cores and are safe in fp16/bf16;
 * black ops (exponentials, reductions, losses) lose too much precision and stay fp32; every other op follows its
 * inputs. Defaults are Paddle's, plus fc (a GEMM) on the white list and batch_norm (its statistics) on the black
 * list; the strategy's custom lists move ops between them.
 */
public final class AmpOpLists {
    static final Set<String> DEFAULT_WHITE = Set.of("matmul", "matmul_v2", "mul", "fc", "conv2d");
    static final Set<String> DEFAULT_BLACK = Set.of("exp", "square", "log", "mean", "sum", "cos_sim", "softmax",
            "softmax_with_cross_entropy", "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2",
            "batch_norm");

    private final Set<String> white;
    private final Set<String> black;

    public AmpOpLists(AmpConfig config) {
        white = new HashSet<>(DEFAULT_WHITE);
        black = new HashSet<>(DEFAULT_BLACK);
        white.addAll(config.customWhiteList());
        black.removeAll(config.customWhiteList());
        black.addAll(config.customBlackList());
        white.removeAll(config.customBlackList());
    }

    public enum Precision { REDUCED, FP32, FOLLOW_INPUTS }

    public Precision precisionOf(String opType) {
        if (white.contains(opType)) {
            return Precision.REDUCED;
        }
        return black.contains(opType) ? Precision.FP32 : Precision.FOLLOW_INPUTS;
    }
}
