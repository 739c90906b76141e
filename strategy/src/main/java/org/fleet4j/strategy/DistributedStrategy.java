package org.fleet4j.strategy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.InvalidValueException;
import org.fleet4j.strategy.schema.Origin;
import org.fleet4j.strategy.schema.Setting;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.strategy.schema.TextTable;
import org.fleet4j.strategy.schema.ValueKind;
import org.fleet4j.text.Quoted;

/**
 * The user's control panel for a distributed job: every knob of Paddle Fleet's DistributedStrategy,
 * set in Java or loaded from a YAML, JSON or prototxt file.
 *
 * <p>A strategy holds only what the user set (with where it was set); every other field reads as its
 * default from {@link StrategySchema}. Two strategies are equal when they set the same fields to
 * the same values. Values are checked when set; combinations are checked by {@link #validate()},
 * by {@link #load} and by {@code EffectiveStrategy.resolve}, which also applies the world's rules.
 *
 * <p>Not thread-safe: build it on one thread and hand {@link #snapshot()}s to others.
 *
 * <pre>{@code
 * DistributedStrategy strategy = new DistributedStrategy()
 *         .fuseGradSizeInMB(16)
 *         .gradientMerge(true)
 *         .gradientMergeConfigs(c -> c.kSteps(4).avg(true));
 * }</pre>
 */
public final class DistributedStrategy {
    private final Map<Field<?>, Setting> settings = new HashMap<>();

    /** A strategy with every field at its default. */
    public DistributedStrategy() {
    }

    /**
     * Reads a strategy file, its format chosen by extension (.yaml/.yml, .json, .prototxt/.pbtxt), and
     * checks it. Every problem of the file is reported at once, each line naming the file, the line,
     * the key, the value and what is allowed.
     *
     * @throws StrategyException if the file is missing, unreadable, malformed or invalid
     */
    public static DistributedStrategy load(Path file) {
        StrategyFormat format = StrategyFormat.of(file);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new StrategyException(file + ": no such strategy file");
        } catch (IOException e) {
            throw new StrategyException(file + ": cannot read the strategy file: " + e.getMessage());
        }
        return parse(text(bytes, file), format, file.toString());
    }

    /** The file's UTF-8 text; a binary file (not UTF-8, or holding NUL bytes) is named as such, with the first bad byte. */
    private static String text(byte[] bytes, Path file) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = StandardCharsets.UTF_8.newDecoder().decode(in, out, true);
        int nul = indexOfNul(bytes);
        int bad = result.isError() ? Math.min(in.position(), nul) : nul;
        if (bad < bytes.length) {
            throw new StrategyException(String.format("%s: not a text file (byte %d is 0x%02x, %s); a strategy file is YAML,"
                    + " JSON or prototxt text", file, bad, bytes[bad] & 0xff, bytes[bad] == 0 ? "a NUL" : "not UTF-8"));
        }
        return out.flip().toString();
    }

    /** The index of the first NUL byte, or the length when there is none. */
    private static int indexOfNul(byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return bytes.length;
    }

    /** Reads a strategy from text in the given format; {@code source} names it in errors. */
    public static DistributedStrategy parse(String text, StrategyFormat format, String source) {
        DistributedStrategy strategy = StrategyBinder.bind(format.read(text, source), source);
        return strategy.validate();
    }

    /** Writes the fields this strategy sets to the file, in the format of its extension. */
    public void save(Path file) {
        StrategyFormat format = StrategyFormat.of(file);
        try {
            Files.writeString(file, format(format), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new StrategyException(file + ": cannot write the strategy file: " + e.getMessage());
        }
    }

    /** The fields this strategy sets, as the text of a file in the given format. */
    public String format(StrategyFormat format) {
        return format.write(settings());
    }

    /** Sets a field, checking its type and range. */
    public <T> DistributedStrategy set(Field<T> field, T value) {
        try {
            put(field, field.fromJava(value), Origin.code());
        } catch (InvalidValueException e) {
            throw new StrategyException(field.key() + ": " + e.getMessage());
        }
        return this;
    }

    /** Sets the field with this key or alias ("fuse_grad_size_in_MB", "thread_num"), checking type and range. */
    public DistributedStrategy set(String keyOrAlias, Object value) {
        Field<?> field = field(keyOrAlias);
        try {
            put(field, field.fromJava(value), Origin.code());
        } catch (InvalidValueException e) {
            String written = keyOrAlias.equals(field.key()) ? keyOrAlias : keyOrAlias + " (" + field.key() + ")";
            throw new StrategyException(written + ": " + e.getMessage());
        }
        return this;
    }

    /** Puts the field back to its default, as if it had never been set. */
    public DistributedStrategy unset(Field<?> field) {
        settings.remove(field);
        return this;
    }

    /** The field's value: what was set, or its default. */
    @SuppressWarnings("unchecked")
    public <T> T get(Field<T> field) {
        Setting setting = settings.get(field);
        return setting == null ? field.defaultValue() : (T) setting.value();
    }

    /** The value of the field with this key or alias. */
    public Object get(String keyOrAlias) {
        return get(field(keyOrAlias));
    }

    public boolean isSet(Field<?> field) {
        return settings.containsKey(field);
    }

    /** Where the field was set, or empty when it is at its default. */
    public Optional<Origin> origin(Field<?> field) {
        return Optional.ofNullable(settings.get(field)).map(Setting::origin);
    }

    /**
     * Checks the combinations of settings that contradict each other whatever the world.
     *
     * @return this strategy
     * @throws StrategyException naming every contradiction
     */
    public DistributedStrategy validate() {
        List<String> problems = ConsistencyRules.problems(this);
        if (!problems.isEmpty()) {
            throw new StrategyException(problems);
        }
        return this;
    }

    /** An immutable copy of every field's value, defaults filled in. */
    public StrategySnapshot snapshot() {
        Map<Field<?>, Object> values = new LinkedHashMap<>();
        StrategySchema.fields().forEach(f -> values.put(f, get(f)));
        return new StrategySnapshot(values);
    }

    /** The set fields in schema order, with where each was set. */
    public Map<Field<?>, Setting> settings() {
        Map<Field<?>, Setting> ordered = new LinkedHashMap<>();
        StrategySchema.fields().stream().filter(settings::containsKey).forEach(f -> ordered.put(f, settings.get(f)));
        return Collections.unmodifiableMap(ordered);
    }

    void put(Field<?> field, Object checkedValue, Origin origin) {
        settings.put(field, new Setting(checkedValue, origin));
    }

    private static Field<?> field(String keyOrAlias) {
        return StrategySchema.find(keyOrAlias).orElseThrow(() -> new StrategyException(
                "unknown key " + Quoted.of(keyOrAlias) + "; " + StrategySchema.unknownKeyHint(keyOrAlias)));
    }

    /** Equal when the same fields are set to the same values (where they were set does not count). */
    @Override
    public boolean equals(Object other) {
        return other instanceof DistributedStrategy s && values(s).equals(values(this));
    }

    @Override
    public int hashCode() {
        return values(this).hashCode();
    }

    private static Map<Field<?>, Object> values(DistributedStrategy s) {
        Map<Field<?>, Object> values = new HashMap<>();
        s.settings.forEach((f, setting) -> values.put(f, setting.value()));
        return values;
    }

    /** Every field as a table: key, value, and where it came from (default, code or file:line). */
    @Override
    public String toString() {
        TextTable table = new TextTable("KEY", "VALUE", "SOURCE");
        for (Field<?> field : StrategySchema.fields()) {
            Setting setting = settings.get(field);
            table.row(field.key(), ValueKind.show(get(field)), setting == null ? "default" : setting.origin().describe());
        }
        return table.render();
    }

    /** How workers combine updates: collective (synchronous allreduce between workers) or ps (parameter servers). */
    public DistributedStrategy mode(Mode value) {
        set(StrategySchema.MODE, value.spelling());
        return this;
    }

    public Mode mode() {
        return Mode.of(get(StrategySchema.MODE));
    }

    /** Parameter-server mode only: workers push gradients without waiting for each other (false = synchronous parameter-server training). */
    public DistributedStrategy aSync(boolean value) {
        set(StrategySchema.A_SYNC, value);
        return this;
    }

    public boolean aSync() {
        return get(StrategySchema.A_SYNC);
    }

    /** Wait for each allreduce to finish before the next op runs on its stream. */
    public DistributedStrategy syncNcclAllreduce(boolean value) {
        set(StrategySchema.SYNC_NCCL_ALLREDUCE, value);
        return this;
    }

    public boolean syncNcclAllreduce() {
        return get(StrategySchema.SYNC_NCCL_ALLREDUCE);
    }

    /** Number of communicators (NCCL on GPUs, process groups on CPUs) that allreduce gradients in parallel. */
    public DistributedStrategy ncclCommNum(int value) {
        set(StrategySchema.NCCL_COMM_NUM, value);
        return this;
    }

    public int ncclCommNum() {
        return get(StrategySchema.NCCL_COMM_NUM);
    }

    /** Allreduce inside each node first, then across nodes, then broadcast inside each node. */
    public DistributedStrategy useHierarchicalAllreduce(boolean value) {
        set(StrategySchema.USE_HIERARCHICAL_ALLREDUCE, value);
        return this;
    }

    public boolean useHierarchicalAllreduce() {
        return get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE);
    }

    /** Ranks in one inner (intra-node) group of the hierarchical allreduce; 1 means the ranks per node. */
    public DistributedStrategy hierarchicalAllreduceInterNranks(int value) {
        set(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS, value);
        return this;
    }

    public int hierarchicalAllreduceInterNranks() {
        return get(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS);
    }

    /** Batch-norm statistics are averaged over all workers instead of computed per worker. */
    public DistributedStrategy syncBatchNorm(boolean value) {
        set(StrategySchema.SYNC_BATCH_NORM, value);
        return this;
    }

    public boolean syncBatchNorm() {
        return get(StrategySchema.SYNC_BATCH_NORM);
    }

    /** Coalesce gradients into buckets and allreduce each bucket at once. */
    public DistributedStrategy fuseAllReduceOps(boolean value) {
        set(StrategySchema.FUSE_ALL_REDUCE_OPS, value);
        return this;
    }

    public boolean fuseAllReduceOps() {
        return get(StrategySchema.FUSE_ALL_REDUCE_OPS);
    }

    /** Largest size in MB of one fused gradient bucket (to disable fusion set fuse_all_reduce_ops: false). */
    public DistributedStrategy fuseGradSizeInMB(int value) {
        set(StrategySchema.FUSE_GRAD_SIZE_IN_MB, value);
        return this;
    }

    public int fuseGradSizeInMB() {
        return get(StrategySchema.FUSE_GRAD_SIZE_IN_MB);
    }

    /** Despite its name, the largest NUMBER OF GRADIENTS in one fused bucket (as Paddle uses it: FLAGS_fuse_parameter_groups_size); a bucket closes at whichever of this and fuse_grad_size_in_MB is reached first. */
    public DistributedStrategy fuseGradSizeInTFLOPS(double value) {
        set(StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS, value);
        return this;
    }

    public double fuseGradSizeInTFLOPS() {
        return get(StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS);
    }

    /** Size in MB of the last gradient bucket, kept small so the final allreduce starts early. */
    public DistributedStrategy lastCommGroupSizeMB(double value) {
        set(StrategySchema.LAST_COMM_GROUP_SIZE_MB, value);
        return this;
    }

    public double lastCommGroupSizeMB() {
        return get(StrategySchema.LAST_COMM_GROUP_SIZE_MB);
    }

    /** Look for parameters that got no gradient this step so their buckets do not wait forever. */
    public DistributedStrategy findUnusedParameters(boolean value) {
        set(StrategySchema.FIND_UNUSED_PARAMETERS, value);
        return this;
    }

    public boolean findUnusedParameters() {
        return get(StrategySchema.FIND_UNUSED_PARAMETERS);
    }

    /** Accumulate gradients over gradient_merge_configs.k_steps steps before one update. */
    public DistributedStrategy gradientMerge(boolean value) {
        set(StrategySchema.GRADIENT_MERGE, value);
        return this;
    }

    public boolean gradientMerge() {
        return get(StrategySchema.GRADIENT_MERGE);
    }

    /** Automatic mixed precision: run white-listed ops in half precision with loss scaling. */
    public DistributedStrategy amp(boolean value) {
        set(StrategySchema.AMP, value);
        return this;
    }

    public boolean amp() {
        return get(StrategySchema.AMP);
    }

    /** Cast gradients to half precision for the allreduce. */
    public DistributedStrategy fp16Allreduce(boolean value) {
        set(StrategySchema.FP16_ALLREDUCE, value);
        return this;
    }

    public boolean fp16Allreduce() {
        return get(StrategySchema.FP16_ALLREDUCE);
    }

    /** Drop activations in the forward pass and recompute them in backward, from recompute_configs.checkpoints. */
    public DistributedStrategy recompute(boolean value) {
        set(StrategySchema.RECOMPUTE, value);
        return this;
    }

    public boolean recompute() {
        return get(StrategySchema.RECOMPUTE);
    }

    /** Local SGD: train locally and average parameters every localsgd_configs.k_steps steps. */
    public DistributedStrategy localsgd(boolean value) {
        set(StrategySchema.LOCALSGD, value);
        return this;
    }

    public boolean localsgd() {
        return get(StrategySchema.LOCALSGD);
    }

    /** Use the LARS optimizer (layer-wise adaptive rate scaling) in place of momentum. */
    public DistributedStrategy lars(boolean value) {
        set(StrategySchema.LARS, value);
        return this;
    }

    public boolean lars() {
        return get(StrategySchema.LARS);
    }

    /** Use the LAMB optimizer in place of Adam. */
    public DistributedStrategy lamb(boolean value) {
        set(StrategySchema.LAMB, value);
        return this;
    }

    public boolean lamb() {
        return get(StrategySchema.LAMB);
    }

    /** Deep gradient compression: allreduce only the largest gradients. */
    public DistributedStrategy dgc(boolean value) {
        set(StrategySchema.DGC, value);
        return this;
    }

    public boolean dgc() {
        return get(StrategySchema.DGC);
    }

    /** Let Fleet choose the strategy itself. */
    public DistributedStrategy auto(boolean value) {
        set(StrategySchema.AUTO, value);
        return this;
    }

    public boolean auto() {
        return get(StrategySchema.AUTO);
    }

    /** Try every cuDNN convolution algorithm and keep the fastest. */
    public DistributedStrategy cudnnExhaustiveSearch(boolean value) {
        set(StrategySchema.CUDNN_EXHAUSTIVE_SEARCH, value);
        return this;
    }

    public boolean cudnnExhaustiveSearch() {
        return get(StrategySchema.CUDNN_EXHAUSTIVE_SEARCH);
    }

    /** Largest cuDNN convolution workspace in MB. */
    public DistributedStrategy convWorkspaceSizeLimit(int value) {
        set(StrategySchema.CONV_WORKSPACE_SIZE_LIMIT, value);
        return this;
    }

    public int convWorkspaceSizeLimit() {
        return get(StrategySchema.CONV_WORKSPACE_SIZE_LIMIT);
    }

    /** Use cuDNN's CUDNN_BATCHNORM_SPATIAL_PERSISTENT batch-norm mode. */
    public DistributedStrategy cudnnBatchnormSpatialPersistent(boolean value) {
        set(StrategySchema.CUDNN_BATCHNORM_SPATIAL_PERSISTENT, value);
        return this;
    }

    public boolean cudnnBatchnormSpatialPersistent() {
        return get(StrategySchema.CUDNN_BATCHNORM_SPATIAL_PERSISTENT);
    }

    /** Parameter-server mode: fuse small sends and receives into one message. */
    public DistributedStrategy tensorFuse(boolean value) {
        set(StrategySchema.TENSOR_FUSE, value);
        return this;
    }

    public boolean tensorFuse() {
        return get(StrategySchema.TENSOR_FUSE);
    }

    /** Parameter-server transport: grpc, grpc++ (DeepRec-style), star_server or star_server_lite. */
    public DistributedStrategy protocol(Protocol value) {
        set(StrategySchema.PROTOCOL, value.spelling());
        return this;
    }

    public Protocol protocol() {
        return Protocol.of(get(StrategySchema.PROTOCOL));
    }

    /** The a_sync_configs group: parameter-server communicator settings (used when mode is ps). */
    public AsyncConfigs aSyncConfigs() {
        return new AsyncConfigs(this);
    }

    /** Sets values of the a_sync_configs group: {@code strategy.aSyncConfigs(c -> c...)}. */
    public DistributedStrategy aSyncConfigs(Consumer<AsyncConfigs> settings) {
        settings.accept(aSyncConfigs());
        return this;
    }

    /** The sparse_table_configs group: admission and eviction of sparse-table rows (used when mode is ps). */
    public SparseTableConfigs sparseTableConfigs() {
        return new SparseTableConfigs(this);
    }

    /** Sets values of the sparse_table_configs group: {@code strategy.sparseTableConfigs(c -> c...)}. */
    public DistributedStrategy sparseTableConfigs(Consumer<SparseTableConfigs> settings) {
        settings.accept(sparseTableConfigs());
        return this;
    }

    /** The amp_configs group: automatic mixed precision settings (used when amp is on). */
    public AmpConfigs ampConfigs() {
        return new AmpConfigs(this);
    }

    /** Sets values of the amp_configs group: {@code strategy.ampConfigs(c -> c...)}. */
    public DistributedStrategy ampConfigs(Consumer<AmpConfigs> settings) {
        settings.accept(ampConfigs());
        return this;
    }

    /** The gradient_merge_configs group: gradient merge settings (used when gradient_merge is on). */
    public GradientMergeConfigs gradientMergeConfigs() {
        return new GradientMergeConfigs(this);
    }

    /** Sets values of the gradient_merge_configs group: {@code strategy.gradientMergeConfigs(c -> c...)}. */
    public DistributedStrategy gradientMergeConfigs(Consumer<GradientMergeConfigs> settings) {
        settings.accept(gradientMergeConfigs());
        return this;
    }

    /** The recompute_configs group: recompute settings (used when recompute is on). */
    public RecomputeConfigs recomputeConfigs() {
        return new RecomputeConfigs(this);
    }

    /** Sets values of the recompute_configs group: {@code strategy.recomputeConfigs(c -> c...)}. */
    public DistributedStrategy recomputeConfigs(Consumer<RecomputeConfigs> settings) {
        settings.accept(recomputeConfigs());
        return this;
    }

    /** The localsgd_configs group: local SGD settings (used when localsgd is on). */
    public LocalSgdConfigs localsgdConfigs() {
        return new LocalSgdConfigs(this);
    }

    /** Sets values of the localsgd_configs group: {@code strategy.localsgdConfigs(c -> c...)}. */
    public DistributedStrategy localsgdConfigs(Consumer<LocalSgdConfigs> settings) {
        settings.accept(localsgdConfigs());
        return this;
    }

    /** The lars_configs group: LARS optimizer settings (used when lars is on). */
    public LarsConfigs larsConfigs() {
        return new LarsConfigs(this);
    }

    /** Sets values of the lars_configs group: {@code strategy.larsConfigs(c -> c...)}. */
    public DistributedStrategy larsConfigs(Consumer<LarsConfigs> settings) {
        settings.accept(larsConfigs());
        return this;
    }

    /** The lamb_configs group: LAMB optimizer settings (used when lamb is on). */
    public LambConfigs lambConfigs() {
        return new LambConfigs(this);
    }

    /** Sets values of the lamb_configs group: {@code strategy.lambConfigs(c -> c...)}. */
    public DistributedStrategy lambConfigs(Consumer<LambConfigs> settings) {
        settings.accept(lambConfigs());
        return this;
    }

    /** The dgc_configs group: deep gradient compression settings (used when dgc is on). */
    public DgcConfigs dgcConfigs() {
        return new DgcConfigs(this);
    }

    /** Sets values of the dgc_configs group: {@code strategy.dgcConfigs(c -> c...)}. */
    public DistributedStrategy dgcConfigs(Consumer<DgcConfigs> settings) {
        settings.accept(dgcConfigs());
        return this;
    }

    /** The gradient_scale_configs group: how gradients of all workers are combined. */
    public GradientScaleConfigs gradientScaleConfigs() {
        return new GradientScaleConfigs(this);
    }

    /** Sets values of the gradient_scale_configs group: {@code strategy.gradientScaleConfigs(c -> c...)}. */
    public DistributedStrategy gradientScaleConfigs(Consumer<GradientScaleConfigs> settings) {
        settings.accept(gradientScaleConfigs());
        return this;
    }

    /** The build_strategy group: program rewrites chosen when compiling. */
    public BuildStrategy buildStrategy() {
        return new BuildStrategy(this);
    }

    /** Sets values of the build_strategy group: {@code strategy.buildStrategy(c -> c...)}. */
    public DistributedStrategy buildStrategy(Consumer<BuildStrategy> settings) {
        settings.accept(buildStrategy());
        return this;
    }

    /** The execution_strategy group: how the executor runs the compiled program. */
    public ExecutionStrategy executionStrategy() {
        return new ExecutionStrategy(this);
    }

    /** Sets values of the execution_strategy group: {@code strategy.executionStrategy(c -> c...)}. */
    public DistributedStrategy executionStrategy(Consumer<ExecutionStrategy> settings) {
        settings.accept(executionStrategy());
        return this;
    }

    /** Fleet docs' spelling of execution_strategy.num_threads. */
    public DistributedStrategy threadNum(int value) {
        return set(StrategySchema.EXEC_NUM_THREADS, value);
    }

    public int threadNum() {
        return get(StrategySchema.EXEC_NUM_THREADS);
    }
}
