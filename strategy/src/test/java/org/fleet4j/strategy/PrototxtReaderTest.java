package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/** The protobuf text format as Paddle writes and users hand-edit it. */
class PrototxtReaderTest {
    private static DistributedStrategy parse(String text) {
        return DistributedStrategy.parse(text, StrategyFormat.PROTOTXT, "s.prototxt");
    }

    @Test
    void readsAFileInTheShapePaddlesSaveToPrototxtWrites() {
        DistributedStrategy s = parse("""
                mode: COLLECTIVE
                amp: true
                recompute: true
                nccl_comm_num: 2
                fuse_grad_size_in_TFLOPS: 20.0
                recompute_configs {
                  checkpoints: "fc_0.tmp_0"
                  checkpoints: "fc_1.tmp_0"
                }
                amp_configs {
                  init_loss_scaling: 32768.0
                  incr_every_n_steps: 1000
                  use_dynamic_loss_scaling: true
                  custom_white_list: "conv2d"
                }
                build_strategy {
                  fuse_bn_act_ops: true
                  enable_backward_optimizer_op_deps: true
                }
                execution_strategy {
                  num_threads: 2
                  num_iteration_per_drop_scope: 10
                }
                """);
        assertEquals(Mode.COLLECTIVE, s.mode());
        assertTrue(s.amp());
        assertEquals(2, s.ncclCommNum());
        assertEquals(20.0, s.fuseGradSizeInTFLOPS());
        assertEquals(List.of("fc_0.tmp_0", "fc_1.tmp_0"), s.recomputeConfigs().checkpoints());
        assertEquals(List.of("conv2d"), s.ampConfigs().customWhiteList());
        assertTrue(s.buildStrategy().fuseBnActOps());
        assertEquals(2, s.threadNum());
        assertEquals(2, s.get("thread_num"));
    }

    @Test
    void acceptsTheTextFormatsOtherSpellings() {
        DistributedStrategy s = parse("""
                # comments, colons before blocks, angle brackets, list literals, separators
                amp: True; lars: false,
                amp_configs: {
                  custom_black_list: ["softmax", 'layer_norm']  # a list literal
                  custom_black_list: "gelu"
                  init_loss_scaling: 1024f
                  incr_ratio: 2.5e0
                }
                dgc_configs < sparsity: [0.5, .75] sparsity: 0.999 >
                recompute_configs { checkpoints: "part" "ly joined" }
                a_sync: false
                fuse_bn_act_ops: true
                thread_num: 3
                """);
        assertTrue(s.amp());
        assertEquals(List.of("softmax", "layer_norm", "gelu"), s.ampConfigs().customBlackList());
        assertEquals(1024.0, s.ampConfigs().initLossScaling());
        assertEquals(2.5, s.ampConfigs().incrRatio());
        assertEquals(List.of(0.5, 0.75, 0.999), s.dgcConfigs().sparsity());
        assertEquals(List.of("partly joined"), s.recomputeConfigs().checkpoints());
        assertTrue(s.buildStrategy().fuseBnActOps(), "the Fleet docs' spelling on the strategy itself");
        assertEquals(3, s.executionStrategy().numThreads());
    }

    @Test
    void negativeNumbersAndEmptyLists() {
        DistributedStrategy s = parse("mode: PS\na_sync_configs { k_steps: -1 }\namp_configs { custom_white_list: [] }\n");
        assertEquals(-1, s.aSyncConfigs().kSteps());
        assertTrue(s.isSet(StrategySchema.ASYNC_K_STEPS));
        assertTrue(s.isSet(StrategySchema.AMP_CUSTOM_WHITE_LIST));
        assertEquals(List.of(), s.ampConfigs().customWhiteList());
    }

    @Test
    void linesCountAcrossCommentsAndBlocks() {
        StrategyException e = org.junit.jupiter.api.Assertions.assertThrows(StrategyException.class, () -> parse("""
                # line 1
                amp_configs {   # line 2

                  # line 4
                  incr_ratio: 0.5
                }
                """));
        assertEquals("s.prototxt:5: amp_configs.incr_ratio: 0.5 is out of range: must be greater than 1.0", e.getMessage());
    }
}
