package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.strategy.schema.ValueKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StrategySchemaTest {
    /** Defaults as Paddle's distributed_strategy.proto (and the issue) give them, written out independently. */
    private static final Map<String, Object> PADDLE_DEFAULTS = new LinkedHashMap<>();

    static {
        Object[] pairs = {
            "mode", "collective", "a_sync", true,
            "a_sync_configs.k_steps", -1, "a_sync_configs.max_merge_var_num", 1, "a_sync_configs.send_queue_size", 16,
            "a_sync_configs.independent_recv_thread", false, "a_sync_configs.thread_pool_size", 1,
            "a_sync_configs.send_wait_times", 1, "a_sync_configs.runtime_split_send_recv", false,
            "a_sync_configs.launch_barrier", true,
            "sync_nccl_allreduce", true, "nccl_comm_num", 1, "use_hierarchical_allreduce", false,
            "hierarchical_allreduce_inter_nranks", 1, "sync_batch_norm", false, "fuse_all_reduce_ops", true,
            "fuse_grad_size_in_MB", 32, "fuse_grad_size_in_TFLOPS", 50.0, "last_comm_group_size_MB", 1.0,
            "find_unused_parameters", false,
            "gradient_merge", false, "gradient_merge_configs.k_steps", 1, "gradient_merge_configs.avg", true,
            "amp", false, "amp_configs.init_loss_scaling", 32768.0, "amp_configs.incr_every_n_steps", 1000,
            "amp_configs.decr_every_n_nan_or_inf", 2, "amp_configs.incr_ratio", 2.0, "amp_configs.decr_ratio", 0.8,
            "amp_configs.use_dynamic_loss_scaling", true, "amp_configs.custom_white_list", List.of(),
            "amp_configs.custom_black_list", List.of(), "amp_configs.use_pure_fp16", false, "amp_configs.dtype", "float16",
            "fp16_allreduce", false, "recompute", false, "recompute_configs.checkpoints", List.of(),
            "localsgd", false, "localsgd_configs.k_steps", 1, "localsgd_configs.begin_step", 1,
            "lars", false, "lars_configs.lars_coeff", 0.001, "lars_configs.lars_weight_decay", 0.0005,
            "lars_configs.epsilon", 0.0, "lars_configs.exclude_from_weight_decay", List.of(),
            "lamb", false, "lamb_configs.lamb_weight_decay", 0.01, "lamb_configs.exclude_from_weight_decay", List.of(),
            "dgc", false, "dgc_configs.rampup_begin_step", 0, "dgc_configs.rampup_step", 1, "dgc_configs.sparsity", List.of(),
            "gradient_scale_configs.scale_strategy", "avg", "auto", false,
            "cudnn_exhaustive_search", true, "conv_workspace_size_limit", 4000, "cudnn_batchnorm_spatial_persistent", true,
            "tensor_fuse", false, "protocol", "grpc",
            "sparse_table_configs.table_names", List.of(), "sparse_table_configs.filter", "none",
            "sparse_table_configs.filter_freq", 0, "sparse_table_configs.admit_probability", 1.0,
            "sparse_table_configs.max_element_size", 1 << 20, "sparse_table_configs.false_positive_probability", 0.01,
            "sparse_table_configs.steps_to_live", 0, "sparse_table_configs.l2_weight_threshold", 0.0,
            "sparse_table_configs.delete_threshold", 0.0, "sparse_table_configs.delete_after_unseen_days", 0,
            "sparse_table_configs.show_click_decay_rate", 0.98, "sparse_table_configs.nonclk_coeff", 0.1,
            "sparse_table_configs.click_coeff", 1.0, "sparse_table_configs.shrink_every_steps", 0,
            "build_strategy.enable_sequential_execution", false, "build_strategy.fuse_elewise_add_act_ops", false,
            "build_strategy.fuse_bn_act_ops", false, "build_strategy.fuse_relu_depthwise_conv", false,
            "build_strategy.fuse_broadcast_ops", false, "build_strategy.fuse_all_optimizer_ops", false,
            "build_strategy.enable_inplace", false, "build_strategy.enable_backward_optimizer_op_deps", true,
            "build_strategy.cache_runtime_context", false,
            "execution_strategy.num_threads", 1, "execution_strategy.num_iteration_per_drop_scope", 10,
            "execution_strategy.num_iteration_per_run", 1, "execution_strategy.use_thread_barrier", false,
        };
        for (int i = 0; i < pairs.length; i += 2) {
            PADDLE_DEFAULTS.put((String) pairs[i], pairs[i + 1]);
        }
    }

    @Test
    void everyFieldHasPaddlesDefault() {
        List<String> keys = StrategySchema.fields().stream().map(Field::key).toList();
        assertEquals(List.copyOf(PADDLE_DEFAULTS.keySet()), keys, "the schema's fields, in order");
        DistributedStrategy fresh = new DistributedStrategy();
        PADDLE_DEFAULTS.forEach((key, expected) -> {
            assertEquals(expected, StrategySchema.find(key).orElseThrow().defaultValue(), key);
            assertEquals(expected, fresh.get(key), key + " of a new strategy");
        });
    }

    @Test
    void typedGettersOfANewStrategyReturnTheDefaults() {
        DistributedStrategy s = new DistributedStrategy();
        assertEquals(Mode.COLLECTIVE, s.mode());
        assertTrue(s.aSync());
        assertEquals(-1, s.aSyncConfigs().kSteps());
        assertEquals(32, s.fuseGradSizeInMB());
        assertEquals(50.0, s.fuseGradSizeInTFLOPS());
        assertEquals(1.0, s.lastCommGroupSizeMB());
        assertEquals(32768.0, s.ampConfigs().initLossScaling());
        assertEquals(0.8, s.ampConfigs().decrRatio());
        assertEquals(List.of(), s.recomputeConfigs().checkpoints());
        assertEquals(ScaleStrategy.AVG, s.gradientScaleConfigs().scaleStrategy());
        assertEquals(Protocol.GRPC, s.protocol());
        assertTrue(s.buildStrategy().enableBackwardOptimizerOpDeps());
        assertEquals(10, s.executionStrategy().numIterationPerDropScope());
        assertEquals(1, s.threadNum());
        assertFalse(s.tensorFuse());
    }

    @ParameterizedTest
    @CsvSource({
        "thread_num, execution_strategy.num_threads",
        "num_threads, execution_strategy.num_threads",
        "num_iteration_per_drop_scope, execution_strategy.num_iteration_per_drop_scope",
        "num_iteration_per_run, execution_strategy.num_iteration_per_run",
        "use_thread_barrier, execution_strategy.use_thread_barrier",
        "enable_sequential_execution, build_strategy.enable_sequential_execution",
        "fuse_elewise_add_act_ops, build_strategy.fuse_elewise_add_act_ops",
        "fuse_bn_act_ops, build_strategy.fuse_bn_act_ops",
        "fuse_relu_depthwise_conv, build_strategy.fuse_relu_depthwise_conv",
        "fuse_broadcast_ops, build_strategy.fuse_broadcast_ops",
        "fuse_all_optimizer_ops, build_strategy.fuse_all_optimizer_ops",
        "enable_inplace, build_strategy.enable_inplace",
        "enable_backward_optimizer_op_deps, build_strategy.enable_backward_optimizer_op_deps",
        "cache_runtime_context, build_strategy.cache_runtime_context",
    })
    void aliasNamesTheSameField(String alias, String key) {
        assertSame(StrategySchema.find(key).orElseThrow(), StrategySchema.find(alias).orElseThrow());
        Field<?> field = StrategySchema.find(key).orElseThrow();
        Object other = field.kind() == ValueKind.BOOL ? !(Boolean) field.defaultValue() : 7;
        DistributedStrategy viaAlias = new DistributedStrategy().set(alias, other);
        assertEquals(other, viaAlias.get(key), "set through the alias, read through the key");
        assertEquals(new DistributedStrategy().set(key, other), viaAlias, "one place of truth behind both names");
        assertEquals(other, viaAlias.snapshot().get(alias));
    }

    @Test
    void everyAliasIsCovered() {
        Set<String> aliases = new HashSet<>();
        StrategySchema.fields().forEach(f -> aliases.addAll(f.aliases()));
        assertEquals(14, aliases.size(), "the aliases tested above: " + aliases);
    }

    @Test
    void threadNumIsNumThreadsInJava() {
        DistributedStrategy s = new DistributedStrategy().threadNum(6);
        assertEquals(6, s.executionStrategy().numThreads());
        s.executionStrategy().numThreads(3);
        assertEquals(3, s.threadNum());
    }

    @Test
    void everyPublicFieldConstantIsInTheTable() throws IllegalAccessException {
        List<Field<?>> constants = new ArrayList<>();
        for (java.lang.reflect.Field f : StrategySchema.class.getDeclaredFields()) {
            if (f.getType() == Field.class && Modifier.isPublic(f.getModifiers())) {
                constants.add((Field<?>) f.get(null));
            }
        }
        assertEquals(Set.copyOf(constants), Set.copyOf(StrategySchema.fields()));
        assertEquals(constants.size(), StrategySchema.fields().size());
    }

    @Test
    void gpuOnlyKnobsAreTheCudnnOnes() {
        assertEquals(List.of("cudnn_exhaustive_search", "conv_workspace_size_limit", "cudnn_batchnorm_spatial_persistent"),
                StrategySchema.fields().stream().filter(Field::isGpuOnly).map(Field::key).toList());
    }

    @Test
    void everyFieldIsDocumentedAndSaysWhatIsAllowed() {
        for (Field<?> f : StrategySchema.fields()) {
            assertFalse(f.doc().isBlank(), f.key());
            assertFalse(f.allowed().isBlank(), f.key());
        }
        assertEquals("an integer, at least 1", StrategySchema.NCCL_COMM_NUM.allowed());
        assertEquals("one of avg, sum", StrategySchema.GRADIENT_SCALE_STRATEGY.allowed());
    }

    @Test
    void suggestionsForMisspeltKeys() {
        assertEquals("did you mean fuse_grad_size_in_MB?", StrategySchema.unknownKeyHint("fuse_grad_size_in_mb"));
        assertEquals("did you mean amp_configs.incr_ratio?", StrategySchema.unknownKeyHint("amp_configs.incr_ratoi"));
        assertEquals("did you mean a_sync_configs.k_steps or gradient_merge_configs.k_steps or localsgd_configs.k_steps?",
                StrategySchema.unknownKeyHint("k_steps"));
        assertEquals("docs/STRATEGY.md lists every key", StrategySchema.unknownKeyHint("learning_rate_schedule"));
    }
}
