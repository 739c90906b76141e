package org.fleet4j.strategy.schema;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every field of the distributed strategy, with names and defaults as Paddle Fleet's
 * distributed_strategy.proto has them. This table is the one place of truth: parsing, validation,
 * saving, the Java API's storage, the table and the dry run all read it.
 */
public final class StrategySchema {
    public static final Field<String> MODE =
            Field.protoEnum("mode", "collective", List.of("collective", "ps"), "How workers combine updates: collective (synchronous allreduce between workers) or ps (parameter servers).");
    public static final Field<Boolean> A_SYNC =
            Field.bool("a_sync", true, "Parameter-server mode only: false is sync (the servers apply one averaged update per step); true is asynchronous: geo when a_sync_configs.k_steps > 0, else async (a_sync_configs.runtime_split_send_recv: true) or half-async (false, the default).");
    public static final Field<Integer> ASYNC_K_STEPS =
            Field.integer("a_sync_configs.k_steps", -1, Constraint.atLeast(-1), "k > 0 is GEO-SGD (needs a_sync: true): workers train local copies and exchange deltas with the servers every k steps; -1 and 0 leave the mode to a_sync and runtime_split_send_recv.");
    public static final Field<Integer> ASYNC_MAX_MERGE_VAR_NUM =
            Field.integer("a_sync_configs.max_merge_var_num", 1, Constraint.atLeast(1), "Async and half-async: how many queued gradients of one variable the communicator sums into one send.");
    public static final Field<Integer> ASYNC_SEND_QUEUE_SIZE =
            Field.integer("a_sync_configs.send_queue_size", 16, Constraint.atLeast(1), "Async and half-async: length of each variable's queue of gradients waiting to be sent; a full queue holds the training step.");
    public static final Field<Boolean> ASYNC_INDEPENDENT_RECV_THREAD =
            Field.bool("a_sync_configs.independent_recv_thread", false, "Async: receive dense parameters on a thread of their own instead of after each send of the parameter.");
    public static final Field<Integer> ASYNC_THREAD_POOL_SIZE =
            Field.integer("a_sync_configs.thread_pool_size", 1, Constraint.atLeast(1), "Worker threads that send gradients (async, half-async) or exchange tables (geo).");
    public static final Field<Integer> ASYNC_SEND_WAIT_TIMES =
            Field.integer("a_sync_configs.send_wait_times", 1, Constraint.atLeast(1), "Async and half-async: how many 10 ms waits for more gradients a sender makes before sending a partial merge.");
    public static final Field<Boolean> ASYNC_RUNTIME_SPLIT_SEND_RECV =
            Field.bool("a_sync_configs.runtime_split_send_recv", false, "With a_sync: true and k_steps <= 0, true is async (no barrier) and false half-async (a barrier per step), as Paddle's DistributeTranspiler chooses; Fleet4J splits variables by server at run time in every mode.");
    public static final Field<Boolean> ASYNC_LAUNCH_BARRIER =
            Field.bool("a_sync_configs.launch_barrier", true, "Workers wait until every server answers before the first step (Fleet.initWorker, up to FLEET_TIMEOUT per server); false: they wait for none, and the first call to a server retries connecting until its deadline.");
    public static final Field<Boolean> SYNC_NCCL_ALLREDUCE =
            Field.bool("sync_nccl_allreduce", true, "Wait for each allreduce to finish before the next op runs on its stream.");
    public static final Field<Integer> NCCL_COMM_NUM =
            Field.integer("nccl_comm_num", 1, Constraint.atLeast(1), "Number of communicators (NCCL on GPUs, process groups on CPUs) that allreduce gradients in parallel.");
    public static final Field<Boolean> USE_HIERARCHICAL_ALLREDUCE =
            Field.bool("use_hierarchical_allreduce", false, "Allreduce inside each node first, then across nodes, then broadcast inside each node.");
    public static final Field<Integer> HIERARCHICAL_ALLREDUCE_INTER_NRANKS =
            Field.integer("hierarchical_allreduce_inter_nranks", 1, Constraint.atLeast(1), "Ranks in one inner (intra-node) group of the hierarchical allreduce; 1 means the ranks per node.");
    public static final Field<Boolean> SYNC_BATCH_NORM =
            Field.bool("sync_batch_norm", false, "Batch-norm statistics are averaged over all workers instead of computed per worker.");
    public static final Field<Boolean> FUSE_ALL_REDUCE_OPS =
            Field.bool("fuse_all_reduce_ops", true, "Coalesce gradients into buckets and allreduce each bucket at once.");
    public static final Field<Integer> FUSE_GRAD_SIZE_IN_MB =
            Field.integer("fuse_grad_size_in_MB", 32, Constraint.atLeast(1), "Largest size in MB of one fused gradient bucket (to disable fusion set fuse_all_reduce_ops: false).");
    public static final Field<Double> FUSE_GRAD_SIZE_IN_TFLOPS =
            Field.decimal("fuse_grad_size_in_TFLOPS", 50.0, Constraint.wholeNumberAtLeast(1), "Despite its name, the largest NUMBER OF GRADIENTS in one fused bucket (as Paddle uses it: FLAGS_fuse_parameter_groups_size); a bucket closes at whichever of this and fuse_grad_size_in_MB is reached first.");
    public static final Field<Double> LAST_COMM_GROUP_SIZE_MB =
            Field.decimal("last_comm_group_size_MB", 1.0, Constraint.greaterThan(0), "Size in MB of the last gradient bucket, kept small so the final allreduce starts early.");
    public static final Field<Boolean> FIND_UNUSED_PARAMETERS =
            Field.bool("find_unused_parameters", false, "Look for parameters that got no gradient this step so their buckets do not wait forever.");
    public static final Field<Boolean> GRADIENT_MERGE =
            Field.bool("gradient_merge", false, "Accumulate gradients over gradient_merge_configs.k_steps steps before one update.");
    public static final Field<Integer> GRADIENT_MERGE_K_STEPS =
            Field.integer("gradient_merge_configs.k_steps", 1, Constraint.atLeast(1), "Steps whose gradients are merged into one update.");
    public static final Field<Boolean> GRADIENT_MERGE_AVG =
            Field.bool("gradient_merge_configs.avg", true, "Average the merged gradients (false: sum them).");
    public static final Field<Boolean> AMP =
            Field.bool("amp", false, "Automatic mixed precision: run white-listed ops in half precision with loss scaling.");
    public static final Field<Double> AMP_INIT_LOSS_SCALING =
            Field.decimal("amp_configs.init_loss_scaling", 32768.0, Constraint.greaterThan(0), "Initial loss scaling factor.");
    public static final Field<Integer> AMP_INCR_EVERY_N_STEPS =
            Field.integer("amp_configs.incr_every_n_steps", 1000, Constraint.atLeast(1), "Raise the loss scaling after this many steps without inf or nan.");
    public static final Field<Integer> AMP_DECR_EVERY_N_NAN_OR_INF =
            Field.integer("amp_configs.decr_every_n_nan_or_inf", 2, Constraint.atLeast(1), "Lower the loss scaling after this many steps with inf or nan.");
    public static final Field<Double> AMP_INCR_RATIO =
            Field.decimal("amp_configs.incr_ratio", 2.0, Constraint.greaterThan(1), "Factor by which the loss scaling grows.");
    public static final Field<Double> AMP_DECR_RATIO =
            Field.decimal("amp_configs.decr_ratio", 0.8, Constraint.openInterval(0, 1), "Factor by which the loss scaling shrinks.");
    public static final Field<Boolean> AMP_USE_DYNAMIC_LOSS_SCALING =
            Field.bool("amp_configs.use_dynamic_loss_scaling", true, "Adjust the loss scaling as training goes (false: keep init_loss_scaling).");
    public static final Field<List<String>> AMP_CUSTOM_WHITE_LIST =
            Field.stringList("amp_configs.custom_white_list", "Op types to run in half precision in addition to the built-in list.");
    public static final Field<List<String>> AMP_CUSTOM_BLACK_LIST =
            Field.stringList("amp_configs.custom_black_list", "Op types to keep in single precision.");
    public static final Field<Boolean> AMP_USE_PURE_FP16 =
            Field.bool("amp_configs.use_pure_fp16", false, "Keep parameters themselves in half precision (pure fp16), not only activations.");
    public static final Field<String> AMP_DTYPE =
            Field.protoEnum("amp_configs.dtype", "float16", List.of("float16", "bfloat16"), "The half precision white-listed ops compute in; CPUs have bfloat16 only.");
    public static final Field<Boolean> FP16_ALLREDUCE =
            Field.bool("fp16_allreduce", false, "Cast gradients to half precision for the allreduce.");
    public static final Field<Boolean> RECOMPUTE =
            Field.bool("recompute", false, "Drop activations in the forward pass and recompute them in backward, from recompute_configs.checkpoints.");
    public static final Field<List<String>> RECOMPUTE_CHECKPOINTS =
            Field.stringList("recompute_configs.checkpoints", "Names of the variables kept in memory; segments between them are recomputed.");
    public static final Field<Boolean> LOCALSGD =
            Field.bool("localsgd", false, "Local SGD: train locally and average parameters every localsgd_configs.k_steps steps.");
    public static final Field<Integer> LOCALSGD_K_STEPS =
            Field.integer("localsgd_configs.k_steps", 1, Constraint.atLeast(1), "Steps between parameter averages.");
    public static final Field<Integer> LOCALSGD_BEGIN_STEP =
            Field.integer("localsgd_configs.begin_step", 1, Constraint.atLeast(1), "Step from which local SGD starts (plain data parallel before).");
    public static final Field<Boolean> LARS =
            Field.bool("lars", false, "Use the LARS optimizer (layer-wise adaptive rate scaling) in place of momentum.");
    public static final Field<Double> LARS_COEFF =
            Field.decimal("lars_configs.lars_coeff", 0.001, Constraint.greaterThan(0), "Trust coefficient of LARS.");
    public static final Field<Double> LARS_WEIGHT_DECAY =
            Field.decimal("lars_configs.lars_weight_decay", 0.0005, Constraint.atLeast(0.0), "Weight decay of LARS.");
    public static final Field<Double> LARS_EPSILON =
            Field.decimal("lars_configs.epsilon", 0.0, Constraint.atLeast(0.0), "Added to the denominator of the local learning rate.");
    public static final Field<List<String>> LARS_EXCLUDE_FROM_WEIGHT_DECAY =
            Field.stringList("lars_configs.exclude_from_weight_decay", "Parameter name fragments exempt from weight decay.");
    public static final Field<Boolean> LAMB =
            Field.bool("lamb", false, "Use the LAMB optimizer in place of Adam.");
    public static final Field<Double> LAMB_WEIGHT_DECAY =
            Field.decimal("lamb_configs.lamb_weight_decay", 0.01, Constraint.atLeast(0.0), "Weight decay of LAMB.");
    public static final Field<List<String>> LAMB_EXCLUDE_FROM_WEIGHT_DECAY =
            Field.stringList("lamb_configs.exclude_from_weight_decay", "Parameter name fragments exempt from weight decay.");
    public static final Field<Boolean> DGC =
            Field.bool("dgc", false, "Deep gradient compression: allreduce only the largest gradients.");
    public static final Field<Integer> DGC_RAMPUP_BEGIN_STEP =
            Field.integer("dgc_configs.rampup_begin_step", 0, Constraint.atLeast(0), "Step at which compression starts.");
    public static final Field<Integer> DGC_RAMPUP_STEP =
            Field.integer("dgc_configs.rampup_step", 1, Constraint.atLeast(1), "Steps over which sparsity ramps up through dgc_configs.sparsity.");
    public static final Field<List<Double>> DGC_SPARSITY =
            Field.decimalList("dgc_configs.sparsity", Constraint.eachInHalfOpenUnit(), "Sparsity at each stage of the ramp-up, each in [0, 1); empty means 0.999 throughout.");
    public static final Field<String> GRADIENT_SCALE_STRATEGY =
            Field.choice("gradient_scale_configs.scale_strategy", "avg", List.of("avg", "sum"), "How gradients from all workers combine: avg divides their sum by the world size, sum does not.");
    public static final Field<Boolean> AUTO =
            Field.bool("auto", false, "Let Fleet choose the strategy itself.");
    public static final Field<Boolean> CUDNN_EXHAUSTIVE_SEARCH =
            Field.bool("cudnn_exhaustive_search", true, "Try every cuDNN convolution algorithm and keep the fastest.").gpuOnly();
    public static final Field<Integer> CONV_WORKSPACE_SIZE_LIMIT =
            Field.integer("conv_workspace_size_limit", 4000, Constraint.atLeast(0), "Largest cuDNN convolution workspace in MB.").gpuOnly();
    public static final Field<Boolean> CUDNN_BATCHNORM_SPATIAL_PERSISTENT =
            Field.bool("cudnn_batchnorm_spatial_persistent", true, "Use cuDNN's CUDNN_BATCHNORM_SPATIAL_PERSISTENT batch-norm mode.").gpuOnly();
    public static final Field<Boolean> TENSOR_FUSE =
            Field.bool("tensor_fuse", false, "Parameter-server mode: fuse small sends and receives into one message.");
    public static final Field<String> PROTOCOL =
            Field.choice("protocol", "grpc", List.of("grpc", "grpc++", "star_server", "star_server_lite"), "Parameter-server transport: grpc, grpc++ (DeepRec-style), star_server or star_server_lite.");
    public static final Field<List<String>> SPARSE_TABLE_NAMES =
            Field.stringList("sparse_table_configs.table_names", "The sparse tables these admission and eviction settings apply to (Paddle's table_name, one TableParameter each); empty: every sparse table.");
    public static final Field<String> SPARSE_FILTER =
            Field.choice("sparse_table_configs.filter", "none", List.of("none", "counter", "probability", "cbf"), "Which ids get a row: every id (none); at its filter_freq-th sighting, counted exactly (counter, DeepRec's CounterFilter) or in a counting Bloom filter of bounded memory (cbf, DeepRec's CBFFilter); or with admit_probability at each sighting (probability, as Paddle's CtrCommonAccessor admits a new feature). Until then a pull reads the initializer's row and pushes are dropped.");
    public static final Field<Integer> SPARSE_FILTER_FREQ =
            Field.integer("sparse_table_configs.filter_freq", 0, Constraint.atLeast(0), "counter and cbf filters: the sighting (a pull of the id) at which an id gets its row; at most 255 for cbf (DeepRec's filter_freq).");
    public static final Field<Double> SPARSE_ADMIT_PROBABILITY =
            Field.decimal("sparse_table_configs.admit_probability", 1.0, Constraint.aboveZeroAtMostOne(), "probability filter: the chance that a sighting of an id without a row gives it one.");
    public static final Field<Integer> SPARSE_MAX_ELEMENT_SIZE =
            Field.integer("sparse_table_configs.max_element_size", 1 << 20, Constraint.atLeast(1), "cbf filter: the distinct ids of the whole table its counters are sized for (DeepRec's max_element_size); each server sizes its share.");
    public static final Field<Double> SPARSE_FALSE_POSITIVE_PROBABILITY =
            Field.decimal("sparse_table_configs.false_positive_probability", 0.01, Constraint.openInterval(0, 1), "cbf filter: the false-positive probability its counters are sized for at max_element_size ids (DeepRec's false_positive_probability).");
    public static final Field<Integer> SPARSE_STEPS_TO_LIVE =
            Field.integer("sparse_table_configs.steps_to_live", 0, Constraint.atLeast(0), "Evict rows not updated for more than this many steps (DeepRec's GlobalStepEvict); 0: off.");
    public static final Field<Double> SPARSE_L2_WEIGHT_THRESHOLD =
            Field.decimal("sparse_table_configs.l2_weight_threshold", 0.0, Constraint.atLeast(0.0), "Evict rows whose value's L2 norm is below this (DeepRec's L2WeightEvict); 0: off.");
    public static final Field<Double> SPARSE_DELETE_THRESHOLD =
            Field.decimal("sparse_table_configs.delete_threshold", 0.0, Constraint.atLeast(0.0), "Evict rows whose show/click score (show - click) * nonclk_coeff + click * click_coeff, decayed at each shrink, is below this (Paddle's ctr_accessor_param; its fleet config's sparse_delete_threshold defaults to 0.8); 0: off.");
    public static final Field<Integer> SPARSE_DELETE_AFTER_UNSEEN_DAYS =
            Field.integer("sparse_table_configs.delete_after_unseen_days", 0, Constraint.atLeast(0), "Evict rows not updated in more than this many shrinks (Paddle's unseen days, counted per shrink); 0: off.");
    public static final Field<Double> SPARSE_SHOW_CLICK_DECAY_RATE =
            Field.decimal("sparse_table_configs.show_click_decay_rate", 0.98, Constraint.aboveZeroAtMostOne(), "The factor each shrink multiplies a row's show and click by (Paddle's default).");
    public static final Field<Double> SPARSE_NONCLK_COEFF =
            Field.decimal("sparse_table_configs.nonclk_coeff", 0.1, Constraint.atLeast(0.0), "Weight of a show without a click in the show/click score (Paddle's default); workers send no clicks, so every show counts so.");
    public static final Field<Double> SPARSE_CLICK_COEFF =
            Field.decimal("sparse_table_configs.click_coeff", 1.0, Constraint.atLeast(0.0), "Weight of a click in the show/click score (Paddle's default).");
    public static final Field<Integer> SPARSE_SHRINK_EVERY_STEPS =
            Field.integer("sparse_table_configs.shrink_every_steps", 0, Constraint.atLeast(0), "Run the eviction rules every this many steps of a table, besides before every save; 0: at saves only (as DeepRec evicts at each checkpoint).");
    public static final Field<Boolean> BUILD_ENABLE_SEQUENTIAL_EXECUTION =
            Field.bool("build_strategy.enable_sequential_execution", false, "Run ops in program order instead of by dependencies.").aliases("enable_sequential_execution");
    public static final Field<Boolean> BUILD_FUSE_ELEWISE_ADD_ACT_OPS =
            Field.bool("build_strategy.fuse_elewise_add_act_ops", false, "Fuse elementwise_add followed by an activation into one op.").aliases("fuse_elewise_add_act_ops");
    public static final Field<Boolean> BUILD_FUSE_BN_ACT_OPS =
            Field.bool("build_strategy.fuse_bn_act_ops", false, "Fuse batch_norm followed by an activation into one op.").aliases("fuse_bn_act_ops");
    public static final Field<Boolean> BUILD_FUSE_RELU_DEPTHWISE_CONV =
            Field.bool("build_strategy.fuse_relu_depthwise_conv", false, "Fuse relu followed by depthwise_conv into one op.").aliases("fuse_relu_depthwise_conv");
    public static final Field<Boolean> BUILD_FUSE_BROADCAST_OPS =
            Field.bool("build_strategy.fuse_broadcast_ops", false, "Fuse the broadcasts of parameters (reduce mode) into one.").aliases("fuse_broadcast_ops");
    public static final Field<Boolean> BUILD_FUSE_ALL_OPTIMIZER_OPS =
            Field.bool("build_strategy.fuse_all_optimizer_ops", false, "Fuse the optimizer updates of all parameters into one op per optimizer type.").aliases("fuse_all_optimizer_ops");
    public static final Field<Boolean> BUILD_ENABLE_INPLACE =
            Field.bool("build_strategy.enable_inplace", false, "Let ops write their output over an input that is no longer needed.").aliases("enable_inplace");
    public static final Field<Boolean> BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS =
            Field.bool("build_strategy.enable_backward_optimizer_op_deps", true, "Order allreduce and optimizer ops by backward dependencies so communication overlaps compute.").aliases("enable_backward_optimizer_op_deps");
    public static final Field<Boolean> BUILD_CACHE_RUNTIME_CONTEXT =
            Field.bool("build_strategy.cache_runtime_context", false, "Cache each op's runtime context between steps.").aliases("cache_runtime_context");
    public static final Field<Integer> EXEC_NUM_THREADS =
            Field.integer("execution_strategy.num_threads", 1, Constraint.atLeast(1), "Threads of the executor that run ops.").aliases("num_threads", "thread_num");
    public static final Field<Integer> EXEC_NUM_ITERATION_PER_DROP_SCOPE =
            Field.integer("execution_strategy.num_iteration_per_drop_scope", 10, Constraint.atLeast(1), "Steps between drops of the temporary variables' scope.").aliases("num_iteration_per_drop_scope");
    public static final Field<Integer> EXEC_NUM_ITERATION_PER_RUN =
            Field.integer("execution_strategy.num_iteration_per_run", 1, Constraint.atLeast(1), "Steps run by one call of the executor.").aliases("num_iteration_per_run");
    public static final Field<Boolean> EXEC_USE_THREAD_BARRIER =
            Field.bool("execution_strategy.use_thread_barrier", false, "Threads meet at a barrier after each step (parameter-server mode).").aliases("use_thread_barrier");

    static final List<Field<?>> FIELDS = List.of(
            MODE,
            A_SYNC,
            ASYNC_K_STEPS,
            ASYNC_MAX_MERGE_VAR_NUM,
            ASYNC_SEND_QUEUE_SIZE,
            ASYNC_INDEPENDENT_RECV_THREAD,
            ASYNC_THREAD_POOL_SIZE,
            ASYNC_SEND_WAIT_TIMES,
            ASYNC_RUNTIME_SPLIT_SEND_RECV,
            ASYNC_LAUNCH_BARRIER,
            SYNC_NCCL_ALLREDUCE,
            NCCL_COMM_NUM,
            USE_HIERARCHICAL_ALLREDUCE,
            HIERARCHICAL_ALLREDUCE_INTER_NRANKS,
            SYNC_BATCH_NORM,
            FUSE_ALL_REDUCE_OPS,
            FUSE_GRAD_SIZE_IN_MB,
            FUSE_GRAD_SIZE_IN_TFLOPS,
            LAST_COMM_GROUP_SIZE_MB,
            FIND_UNUSED_PARAMETERS,
            GRADIENT_MERGE,
            GRADIENT_MERGE_K_STEPS,
            GRADIENT_MERGE_AVG,
            AMP,
            AMP_INIT_LOSS_SCALING,
            AMP_INCR_EVERY_N_STEPS,
            AMP_DECR_EVERY_N_NAN_OR_INF,
            AMP_INCR_RATIO,
            AMP_DECR_RATIO,
            AMP_USE_DYNAMIC_LOSS_SCALING,
            AMP_CUSTOM_WHITE_LIST,
            AMP_CUSTOM_BLACK_LIST,
            AMP_USE_PURE_FP16,
            AMP_DTYPE,
            FP16_ALLREDUCE,
            RECOMPUTE,
            RECOMPUTE_CHECKPOINTS,
            LOCALSGD,
            LOCALSGD_K_STEPS,
            LOCALSGD_BEGIN_STEP,
            LARS,
            LARS_COEFF,
            LARS_WEIGHT_DECAY,
            LARS_EPSILON,
            LARS_EXCLUDE_FROM_WEIGHT_DECAY,
            LAMB,
            LAMB_WEIGHT_DECAY,
            LAMB_EXCLUDE_FROM_WEIGHT_DECAY,
            DGC,
            DGC_RAMPUP_BEGIN_STEP,
            DGC_RAMPUP_STEP,
            DGC_SPARSITY,
            GRADIENT_SCALE_STRATEGY,
            AUTO,
            CUDNN_EXHAUSTIVE_SEARCH,
            CONV_WORKSPACE_SIZE_LIMIT,
            CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
            TENSOR_FUSE,
            PROTOCOL,
            SPARSE_TABLE_NAMES,
            SPARSE_FILTER,
            SPARSE_FILTER_FREQ,
            SPARSE_ADMIT_PROBABILITY,
            SPARSE_MAX_ELEMENT_SIZE,
            SPARSE_FALSE_POSITIVE_PROBABILITY,
            SPARSE_STEPS_TO_LIVE,
            SPARSE_L2_WEIGHT_THRESHOLD,
            SPARSE_DELETE_THRESHOLD,
            SPARSE_DELETE_AFTER_UNSEEN_DAYS,
            SPARSE_SHOW_CLICK_DECAY_RATE,
            SPARSE_NONCLK_COEFF,
            SPARSE_CLICK_COEFF,
            SPARSE_SHRINK_EVERY_STEPS,
            BUILD_ENABLE_SEQUENTIAL_EXECUTION,
            BUILD_FUSE_ELEWISE_ADD_ACT_OPS,
            BUILD_FUSE_BN_ACT_OPS,
            BUILD_FUSE_RELU_DEPTHWISE_CONV,
            BUILD_FUSE_BROADCAST_OPS,
            BUILD_FUSE_ALL_OPTIMIZER_OPS,
            BUILD_ENABLE_INPLACE,
            BUILD_ENABLE_BACKWARD_OPTIMIZER_OP_DEPS,
            BUILD_CACHE_RUNTIME_CONTEXT,
            EXEC_NUM_THREADS,
            EXEC_NUM_ITERATION_PER_DROP_SCOPE,
            EXEC_NUM_ITERATION_PER_RUN,
            EXEC_USE_THREAD_BARRIER);

    static final List<FieldGroup> GROUPS = List.of(
            new FieldGroup("a_sync_configs", "parameter-server communicator settings (used when mode is ps)", null),
            new FieldGroup("amp_configs", "automatic mixed precision settings (used when amp is on)", AMP),
            new FieldGroup("gradient_merge_configs", "gradient merge settings (used when gradient_merge is on)", GRADIENT_MERGE),
            new FieldGroup("recompute_configs", "recompute settings (used when recompute is on)", RECOMPUTE),
            new FieldGroup("localsgd_configs", "local SGD settings (used when localsgd is on)", LOCALSGD),
            new FieldGroup("lars_configs", "LARS optimizer settings (used when lars is on)", LARS),
            new FieldGroup("lamb_configs", "LAMB optimizer settings (used when lamb is on)", LAMB),
            new FieldGroup("dgc_configs", "deep gradient compression settings (used when dgc is on)", DGC),
            new FieldGroup("sparse_table_configs", "admission and eviction of sparse-table rows on the parameter servers (used when mode is ps)", null),
            new FieldGroup("gradient_scale_configs", "how gradients of all workers are combined", null),
            new FieldGroup("build_strategy", "program rewrites chosen when compiling", null),
            new FieldGroup("execution_strategy", "how the executor runs the compiled program", null));

    private static final Map<String, Field<?>> BY_NAME = indexByName();

    private StrategySchema() {
    }

    /** All fields, in the order files are written and the table lists them. */
    public static List<Field<?>> fields() {
        return FIELDS;
    }

    public static List<FieldGroup> groups() {
        return GROUPS;
    }

    /** The field with this canonical key or alias ({@code thread_num}, {@code fuse_bn_act_ops}). */
    public static Optional<Field<?>> find(String keyOrAlias) {
        return Optional.ofNullable(BY_NAME.get(keyOrAlias));
    }

    public static Optional<FieldGroup> findGroup(String name) {
        return GROUPS.stream().filter(g -> g.name().equals(name)).findFirst();
    }

    /** The fields of one group, in schema order. */
    public static List<Field<?>> fieldsOf(FieldGroup group) {
        return FIELDS.stream().filter(f -> group.name().equals(f.group())).toList();
    }

    /**
     * Whether the runtime acts on this field at this value: whether a {@link KnobReader} on the class path (the
     * compiler's passes, the executor and Fleet) declares that it reads it. Every other knob is accepted and recorded,
     * and the dry run reports it as not in effect when it is not at its default.
     */
    public static boolean inEffect(Field<?> field, Object value) {
        return HonouredKnobs.inEffect(field, value);
    }

    /**
     * The hint after "unknown key 'x'": the nearest valid key, or the keys of every group that has
     * a field of that name (for "k_steps" written outside its group), or where to look.
     */
    public static String unknownKeyHint(String given) {
        List<String> candidates = new ArrayList<>(BY_NAME.keySet());
        GROUPS.forEach(g -> candidates.add(g.name()));
        Optional<String> nearest = KeySuggester.nearest(given, candidates);
        if (nearest.isPresent()) {
            return "did you mean " + nearest.get() + "?";
        }
        String leaf = given.substring(given.lastIndexOf('.') + 1);
        List<String> sameLeaf = FIELDS.stream().filter(f -> f.name().equals(leaf) && !f.key().equals(given))
                .map(Field::key).toList();
        if (!sameLeaf.isEmpty()) {
            return "did you mean " + String.join(" or ", sameLeaf) + "?";
        }
        return "docs/STRATEGY.md lists every key";
    }

    private static Map<String, Field<?>> indexByName() {
        Map<String, Field<?>> byName = new LinkedHashMap<>();
        Set<String> groupNames = new HashSet<>();
        GROUPS.forEach(g -> groupNames.add(g.name()));
        for (Field<?> field : FIELDS) {
            List<String> names = new ArrayList<>(field.aliases());
            names.addFirst(field.key());
            for (String name : names) {
                if (byName.putIfAbsent(name, field) != null || groupNames.contains(name)) {
                    throw new IllegalStateException("strategy schema: the name " + name + " is used twice");
                }
            }
            if (field.group() != null && !groupNames.contains(field.group())) {
                throw new IllegalStateException("strategy schema: " + field.key() + " belongs to no declared group");
            }
        }
        return Collections.unmodifiableMap(byName);
    }

    /** All names a file may use for fields: keys and aliases. */
    static Collection<String> names() {
        return BY_NAME.keySet();
    }
}
