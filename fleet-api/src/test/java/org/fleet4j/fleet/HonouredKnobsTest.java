package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fleet4j.compiler.PassKnobs;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.ScaleStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.StrategyWarning;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.KnobReader;
import org.fleet4j.strategy.schema.KnobUse;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/**
 * The knobs in effect are what the runtime's readers declare (the compiler's passes and {@link RuntimeKnobs}), and a
 * knob is declared only where the runtime's code reads it.
 */
class HonouredKnobsTest {
    /** The modules whose code acts on the strategy. */
    private static final List<Path> RUNTIME_SOURCES = Stream.of("fleet-core", "ops-fusion", "pserver", "fleet-api", "fleet-gpu")
            .map(m -> Path.of("..", m, "src", "main", "java")).toList();

    private static List<KnobReader> readers() {
        return ServiceLoader.load(KnobReader.class).stream().map(ServiceLoader.Provider::get).toList();
    }

    @Test
    void bothTheCompilerAndTheRuntimeDeclareTheirKnobs() {
        List<KnobReader> readers = readers();
        assertTrue(readers.stream().anyMatch(r -> r instanceof PassKnobs), readers.toString());
        assertTrue(readers.stream().anyMatch(r -> r instanceof RuntimeKnobs), readers.toString());
    }

    @Test
    void theKnobsInEffectAreTheDeclaredOnes() {
        List<String> inEffect = StrategySchema.fields().stream()
                .filter(f -> StrategySchema.inEffect(f, f.defaultValue())).map(Field::key).toList();
        assertEquals(List.of("mode", "a_sync", "a_sync_configs.k_steps", "a_sync_configs.max_merge_var_num",
                "a_sync_configs.send_queue_size", "a_sync_configs.independent_recv_thread", "a_sync_configs.thread_pool_size",
                "a_sync_configs.send_wait_times", "a_sync_configs.runtime_split_send_recv", "a_sync_configs.launch_barrier",
                "sync_nccl_allreduce", "nccl_comm_num", "use_hierarchical_allreduce", "hierarchical_allreduce_inter_nranks",
                "sync_batch_norm", "fuse_all_reduce_ops", "fuse_grad_size_in_MB", "fuse_grad_size_in_TFLOPS",
                "last_comm_group_size_MB", "find_unused_parameters", "gradient_merge", "gradient_merge_configs.k_steps", "gradient_merge_configs.avg",
                "amp", "amp_configs.init_loss_scaling", "amp_configs.incr_every_n_steps",
                "amp_configs.decr_every_n_nan_or_inf", "amp_configs.incr_ratio", "amp_configs.decr_ratio",
                "amp_configs.use_dynamic_loss_scaling", "amp_configs.custom_white_list", "amp_configs.custom_black_list",
                "fp16_allreduce", "gradient_scale_configs.scale_strategy", "tensor_fuse", "protocol",
                "sparse_table_configs.table_names", "sparse_table_configs.filter", "sparse_table_configs.filter_freq",
                "sparse_table_configs.admit_probability", "sparse_table_configs.max_element_size",
                "sparse_table_configs.false_positive_probability", "sparse_table_configs.steps_to_live",
                "sparse_table_configs.l2_weight_threshold", "sparse_table_configs.delete_threshold",
                "sparse_table_configs.delete_after_unseen_days", "sparse_table_configs.show_click_decay_rate",
                "sparse_table_configs.nonclk_coeff", "sparse_table_configs.click_coeff",
                "sparse_table_configs.shrink_every_steps",
                "build_strategy.enable_sequential_execution",
                "build_strategy.fuse_elewise_add_act_ops",
                "build_strategy.fuse_bn_act_ops", "build_strategy.fuse_relu_depthwise_conv", "build_strategy.fuse_all_optimizer_ops",
                "build_strategy.enable_inplace", "build_strategy.enable_backward_optimizer_op_deps", "execution_strategy.num_threads",
                "execution_strategy.num_iteration_per_drop_scope", "execution_strategy.num_iteration_per_run"), inEffect);
        assertTrue(StrategySchema.inEffect(StrategySchema.MODE, "ps"), "parameter-server training runs");
        assertTrue(StrategySchema.inEffect(StrategySchema.A_SYNC, false), "sync mode runs");
        assertTrue(StrategySchema.inEffect(StrategySchema.A_SYNC, true), "async, half-async and geo run");
        assertTrue(StrategySchema.inEffect(StrategySchema.ASYNC_LAUNCH_BARRIER, false), "workers may start without the servers");
        assertTrue(StrategySchema.inEffect(StrategySchema.PROTOCOL, "grpc++"), "the grpc++ transport runs");
        assertTrue(StrategySchema.inEffect(StrategySchema.PROTOCOL, "star_server"));
        assertTrue(StrategySchema.inEffect(StrategySchema.PROTOCOL, "star_server_lite"));
        assertTrue(StrategySchema.inEffect(StrategySchema.TENSOR_FUSE, true));
        assertTrue(StrategySchema.inEffect(StrategySchema.AMP_DTYPE, "bfloat16"));
        assertFalse(StrategySchema.inEffect(StrategySchema.AMP_DTYPE, "float16"));
    }

    @Test
    void honouredKnobsRaiseNoWarningWhenChanged() {
        DistributedStrategy s = new DistributedStrategy().lars(true).fuseGradSizeInMB(16)
                .gradientScaleConfigs(c -> c.scaleStrategy(ScaleStrategy.SUM)).threadNum(4);
        assertEquals(List.of("lars = true: not in effect yet: accepted and recorded, but the Fleet4J runtime does not act on it yet"),
                EffectiveStrategy.resolve(s, new World(2, 4, "gpu")).warnings().stream().map(StrategyWarning::toString).toList(),
                "honoured (fuse_grad_size_in_MB, scale_strategy, num_threads): no warning");
    }

    /**
     * Reading a knob is {@code .get(StrategySchema.X)} or a pass's {@code .knob(StrategySchema.X)} in main code (or
     * {@code .knob(X)} with the constant imported statically, as the passes' registrations do).
     */
    @Test
    void everyDeclaredKnobIsReadByTheRuntimesCode() throws Exception {
        Map<Field<?>, String> constants = new HashMap<>();
        for (java.lang.reflect.Field f : StrategySchema.class.getDeclaredFields()) {
            if (f.getType() == Field.class && Modifier.isPublic(f.getModifiers())) {
                constants.put((Field<?>) f.get(null), f.getName());
            }
        }
        String code = runtimeCode();
        List<String> unread = new ArrayList<>();
        for (KnobReader reader : readers()) {
            for (KnobUse use : reader.knobs()) {
                String constant = constants.get(use.field());
                Pattern read = Pattern.compile("\\.(get|knob)\\((StrategySchema\\.)?" + constant + "\\)");
                if (!read.matcher(code).find()) {
                    unread.add(reader.reader() + " declare " + use.field().key() + " (" + constant + "), which no code reads");
                }
            }
        }
        assertEquals(List.of(), unread);
    }

    /** The runtime's main sources, without comments. */
    private static String runtimeCode() throws IOException {
        StringBuilder code = new StringBuilder();
        for (Path root : RUNTIME_SOURCES) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    for (String line : Files.readAllLines(f)) {
                        String s = line.strip();
                        if (!s.startsWith("*") && !s.startsWith("//") && !s.startsWith("/*")) {
                            code.append(s).append('\n');
                        }
                    }
                }
            }
        }
        return code.toString();
    }
}
