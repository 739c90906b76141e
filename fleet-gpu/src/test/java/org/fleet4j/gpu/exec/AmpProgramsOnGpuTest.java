package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Without a GPU: mnist's and mlp_perf's programs compiled with the {@code amp} pass (bfloat16, dynamic loss scaling),
 * alone and with every fusion and the bfloat16 allreduce, are prepared for the GPU: every op type they hold, each op
 * the AMP pass can emit among them, has a GPU kernel, and the training step takes no host fallback (on two ranks only
 * the allreduce, until an NCCL group is attached).
 */
class AmpProgramsOnGpuTest {
    @RegisterExtension
    static final OneRankJob JOB = new OneRankJob();
    private static final int[] MNIST = {784, 512, 512, 10};
    /** What the AMP pass writes into a program besides the ops it rewraps. */
    private static final Set<String> AMP_OPS = Set.of("cast", "cast_grad", "elementwise_mul", "elementwise_mul_grad",
            "check_finite_and_unscale", "update_loss_scaling", "logical_not", "conditional_begin", "conditional_end");

    private static DistributedStrategy amp(boolean fusions, boolean bf16Allreduce) {
        DistributedStrategy s = fusions ? MlpPrograms.allFusions() : new DistributedStrategy();
        return s.set(StrategySchema.AMP, true).set(StrategySchema.AMP_DTYPE, "bfloat16")
                .set(StrategySchema.FP16_ALLREDUCE, bf16Allreduce);
    }

    private static Set<String> opTypes(Program p) {
        Set<String> types = new TreeSet<>();
        p.globalBlock().ops().forEach(op -> types.add(op.type()));
        return types;
    }

    @ParameterizedTest
    @ValueSource(strings = {"sgd", "momentum", "adam"})
    void everyOpOfAnAmpProgramHasAGpuKernel(String optimizer) {
        for (int ranks : new int[]{1, 2}) {
            for (DistributedStrategy s : List.of(amp(false, false), amp(true, false), amp(true, ranks > 1))) {
                Mlp net = MlpPrograms.build(MNIST, optimizer, ranks, s);
                Set<String> types = opTypes(net.main());
                assertTrue(types.containsAll(AMP_OPS), "the AMP pass ran: " + types);
                boolean bf16Matmul = net.main().globalBlock().ops().stream().anyMatch(op -> op.type().equals("matmul")
                        && net.main().globalBlock().var(op.in("X")).dtype() == DType.BF16);
                assertTrue(bf16Matmul, "matmul computes in bfloat16: " + net.main());
                GpuPlan plan = new GpuPlan(net.main(), null, List.of(), ring -> null, JOB.context());
                assertEquals(ranks == 1 ? Set.of() : Set.of("c_allreduce"), plan.hostOps,
                        optimizer + " on " + ranks + " ranks with " + types);
                Set<String> startupHostOps = new GpuPlan(net.startup(), null, List.of(), ring -> null,
                        JOB.context()).hostOps;
                assertTrue(Set.of("uniform_random", "fill_constant", "c_broadcast").containsAll(startupHostOps),
                        "startup: " + startupHostOps);
                if (ranks > 1 && s.get(StrategySchema.FP16_ALLREDUCE)) {
                    assertTrue(types.contains("allreduce_cast"), "bfloat16 allreduce: " + types);
                }
            }
        }
    }
}
