package org.fleet4j.fleet;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.compiler.HierarchicalForm;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.device.Devices;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.CheckpointFolder;
import org.fleet4j.core.io.LoadOptions;
import org.fleet4j.core.io.LoadReport;
import org.fleet4j.core.io.ModelState;
import org.fleet4j.core.io.ParameterLoadOptions;
import org.fleet4j.core.io.Parameters;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.fleet.role.EnvironmentRoleMaker;
import org.fleet4j.fleet.role.RoleMaker;
import org.fleet4j.pserver.compile.PsInference;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.PsTransport;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.text.Quoted;

/**
 * A process's handle on a collective data-parallel job: its role, the effective strategy for the world, and the
 * process groups that gradient allreduces run on: the default group (ring 0), and the further rings the strategy's
 * {@link RingLayout} names (nccl_comm_num communicators; inner and leaders groups for hierarchical allreduce). Its
 * {@link #execContext()} hands those rings, and the memory registered with them, to the kernels of the executors it
 * makes; nothing of a Fleet is process-wide, so two can run in one JVM. Open one per rank with {@link #init}, close it
 * at the end (it is {@link AutoCloseable}).
 */
public final class Fleet implements AutoCloseable {
    /** The ring id of the default group, as {@code c_allreduce} and {@code c_broadcast} name it. */
    public static final int DEFAULT_RING = 0;
    /**
     * Set to 1 by {@code fleetrun --dry_run PROGRAM}: the process rendezvouses with nobody, opens no group, and stops in
     * {@code minimize} once the compiler has printed what it did to the program for this world.
     */
    public static final String DRY_RUN_ENV = "FLEET_DRY_RUN";

    /** What the error for a ring this job did not open tells the user. */
    private static final String MISSING_RING = "this job did not open it: Fleet.init opens the rings that the"
            + " strategy's nccl_comm_num and use_hierarchical_allreduce ask for; compile with its layout,"
            + " Pipeline.forStrategy(fleet.strategy(), fleet.ringLayout()): with FLEET_HIERARCHICAL_FORM=reduce it"
            + " opens no cross rings for the reduce-scatter form";

    private final Role role;
    private final EffectiveStrategy strategy;
    private final RingLayout layout;
    private final ProcessGroup group;
    private final OpenRings rings;
    private final RegisteredBucketMemory bucketMemory;
    private ExecContext context;
    private final Duration timeout;
    private final FleetUtil util;
    private final ParameterServerJob ps;
    private final boolean dryRun;
    /** Where Fleet and the distributed optimizer write what they did (the program chose it in Fleet.init). */
    private final PrintStream log;

    /**
     * {@code group}, {@code rings} and {@code util} are null in a dry run, whose context has no rings, and on a parameter
     * server; {@code ps} is null in collective mode.
     */
    private Fleet(Role role, EffectiveStrategy strategy, RingLayout layout, ProcessGroup group, OpenRings rings,
                  RegisteredBucketMemory bucketMemory, ExecContext context, Duration timeout, ParameterServerJob ps,
                  boolean dryRun, PrintStream log) {
        this.role = role;
        this.strategy = strategy;
        this.layout = layout;
        this.group = group;
        this.rings = rings;
        this.bucketMemory = bucketMemory;
        this.context = context;
        this.timeout = timeout.plusSeconds(5);
        this.util = group == null ? null : new FleetUtil(group, this.timeout);
        this.ps = ps;
        this.dryRun = dryRun;
        this.log = log;
    }

    /** Role from the environment, strategy from FLEET_STRATEGY (fleetrun --strategy) or all defaults. */
    public static Fleet init() {
        String file = System.getenv("FLEET_STRATEGY");
        return init(file == null || file.isBlank() ? new DistributedStrategy() : DistributedStrategy.load(Path.of(file)));
    }

    /** Role from whichever launcher started this process (a world of one without one). */
    public static Fleet init(DistributedStrategy strategy) {
        return init(EnvironmentRoleMaker.fromSystem(), strategy);
    }

    /** As {@link #init(RoleMaker, DistributedStrategy, GroupOptions, PrintStream)}; FLEET_TIMEOUT (seconds) bounds every wait. */
    public static Fleet init(RoleMaker roleMaker, DistributedStrategy strategy) {
        return init(roleMaker, strategy, GroupOptions.defaults().withTimeout(timeout(System.getenv("FLEET_TIMEOUT"))),
                System.out);
    }

    /** How long to wait for other ranks: FLEET_TIMEOUT in seconds, else the collective module's default. */
    public static Duration timeout(String fleetTimeout) {
        if (fleetTimeout == null || fleetTimeout.isBlank()) {
            return GroupOptions.DEFAULT_TIMEOUT;
        }
        try {
            long seconds = Long.parseLong(fleetTimeout.trim());
            if (seconds >= 1) {
                return Duration.ofSeconds(seconds);
            }
        } catch (NumberFormatException e) {
            // reported below, with the value
        }
        throw new IllegalArgumentException("environment variable FLEET_TIMEOUT=" + Quoted.of(fleetTimeout)
                + " is not a whole number of seconds (at least 1)");
    }

    /**
     * Reads the role, resolves the strategy for the world and this rank's device (printed on rank 0 to {@code log}),
     * rendezvouses with the
     * other ranks at the role's master and opens every ring of the strategy's {@link RingLayout} (listed on rank 0);
     * every wait is bounded by {@code options.timeout()}.
     */
    public static Fleet init(RoleMaker roleMaker, DistributedStrategy strategy, GroupOptions options, PrintStream log) {
        return init(roleMaker, strategy, options, log, "1".equals(System.getenv(DRY_RUN_ENV)), System.getenv());
    }

    /** {@code env} holds the job token ({@link JobToken#fromEnvironment}) and the device ({@link Devices#DEVICE_ENV}). */
    static Fleet init(RoleMaker roleMaker, DistributedStrategy strategy, GroupOptions options, PrintStream log, boolean dryRun,
                      Map<String, String> env) {
        if (roleMaker == null || strategy == null || options == null) {
            throw new IllegalArgumentException("Fleet.init needs a role maker, a strategy and group options (got null)");
        }
        Role role = roleMaker.role();
        EffectiveStrategy effective = EffectiveStrategy.resolve(strategy, new World(role.nodeNum(), role.localWorldSize(),
                Devices.kindOf(env.get(Devices.DEVICE_ENV))));
        Mode mode = Mode.of(effective.get(StrategySchema.MODE));
        boolean psMode = mode == Mode.PS;
        if (role.isServer() && !psMode) {
            throw new IllegalArgumentException("Fleet.init: this process is " + role.describe() + " (TRAINING_ROLE=PSERVER),"
                    + " but the strategy's mode is " + mode.spelling() + "; parameter servers need mode ps"
                    + " (set mode: ps in the strategy, e.g. bin/fleetrun --strategy ps.yaml)");
        }
        if (role.isWorker() && !psMode && role.serverNum() > 0) {
            throw new IllegalArgumentException("Fleet.init: this process is " + role.describe() + " in a job with "
                    + role.serverNum() + " parameter server(s) (PADDLE_PSERVERS_IP_PORT_LIST), but the strategy's mode is "
                    + mode.spelling() + ", which would train without them; set mode: ps in the strategy (e.g. bin/fleetrun"
                    + " --strategy ps.yaml), or start no servers");
        }
        if (role.isFirst()) {
            log.println("fleet: " + role.describe());
            log.println(StrategyReport.describe(effective));
            if (psMode) {
                log.print("fleet: " + PsTransport.forProtocol(effective.get(StrategySchema.PROTOCOL))
                        .describe(env, role.workerNum()));
            }
        }
        RingLayout layout = RingLayout.of(effective, HierarchicalForm.parse(System.getenv(HierarchicalForm.ENV)));
        if (dryRun) {
            log.println("fleet: dry run: no rendezvous, no process groups; the program stops after the compiler");
            ParameterServerJob ps = psMode
                    ? new ParameterServerJob(role, strategy, effective, JobToken.random(), options.timeout(), log) : null;
            return new Fleet(role, effective, layout, null, null, null, ExecContext.none(), options.timeout(), ps, true, log);
        }
        if (role.isWorker() && psMode && role.serverNum() == 0) {
            throw new IllegalArgumentException("Fleet.init: the strategy's mode is ps, but this process is " + role.describe()
                    + " in a job without parameter servers; start the job with bin/fleetrun --server_num S --worker_num W,"
                    + " or set PADDLE_PSERVERS_IP_PORT_LIST");
        }
        // a parameter-server job's servers and trainers share one token (the servers' calls, the trainers' group)
        JobToken token = JobToken.fromEnvironment(env, psMode ? role.workerNum() + role.serverNum() : role.worldSize(),
                role.publicJobFacts(), warning -> log.println("fleet: WARNING: " + warning));
        ParameterServerJob ps = psMode ? new ParameterServerJob(role, strategy, effective, token, options.timeout(), log) : null;
        if (role.isServer()) {
            return new Fleet(role, effective, layout, null, null, null, ExecContext.none(), options.timeout(), ps, false, log);
        }
        boolean registeredBuckets = RegisteredBucketMemory.enabled(System.getenv(RegisteredBucketMemory.ENV));
        ProcessGroup group;
        try {
            group = ProcessGroups.init(role, token, options);
        } catch (RuntimeException e) {
            // the cause says what went wrong, a timeout included: a port held by another job fails in moments
            throw new CollectiveException("Fleet.init: rank " + role.rank() + " of " + role.worldSize()
                    + " could not rendezvous at " + role.master() + ": " + e.getMessage(), e);
        }
        OpenRings rings;
        try {
            rings = OpenRings.open(layout, group, options);
        } catch (RuntimeException e) {
            group.close();
            throw e;
        }
        if (role.isFirst()) {
            log.println(rings.describe());
        }
        RegisteredBucketMemory bucketMemory = new RegisteredBucketMemory();
        ExecContext.Builder context = rings.addTo(ExecContext.builder().missingRingHint(MISSING_RING));
        bucketMemory.addTo(context, layout, rings, registeredBuckets);
        return new Fleet(role, effective, layout, group, rings, bucketMemory, context.build(), options.timeout(), ps,
                false, log);
    }

    public Role role() {
        return role;
    }

    /** The trainer id (a parameter server has none). */
    public int workerIndex() {
        return role.workerIndex();
    }

    /** Whether this process is a parameter server (TRAINING_ROLE=PSERVER). */
    public boolean isServer() {
        return role.isServer();
    }

    /** Whether this process is a trainer. */
    public boolean isWorker() {
        return role.isWorker();
    }

    /**
     * A parameter server's tables, as {@code minimize} planned them, their values from {@code checkpointDirOrNull} when
     * given (what {@link #savePersistables} wrote, by any number of servers), else from the initializers.
     */
    public void initServer(Path checkpointDirOrNull) {
        server("initServer").initServer(checkpointDirOrNull);
    }

    /** Serves this server's tables over the strategy's protocol until the workers stop it ({@link #stopWorker}). */
    public void runServer() {
        server("runServer").runServer();
    }

    /**
     * Connects this trainer to every parameter server; executors made from {@link #execContext()} afterwards give the
     * worker program's pull and push kernels this client.
     */
    public void initWorker() {
        ParameterServerJob job = psWorker("initWorker");
        context = context.toBuilder().service(PsCommunicator.class, job.initWorker()).build();
    }

    /** Waits for every trainer, then trainer 0 stops the servers; the connections close. */
    public void stopWorker() {
        ParameterServerJob job = psWorker("stopWorker");
        job.flush();
        awaitTrainers("stopWorker");
        try {
            if (isFirstWorker()) {
                job.stopServers();
            }
        } finally {
            job.closeWorker();
        }
    }

    /**
     * Parameter-server mode: every server writes its shard of every table (dense blocks, sparse rows, optimizer
     * state) to {@code dir}, a folder on the servers' file system; trainer 0 asks them, the others wait for it.
     * {@link #initServer} loads it, with any number of servers. Every shard's manifest names this save (the job, a
     * random save id), and a load refuses a folder whose shards name different saves.
     */
    public void savePersistables(Path dir) {
        savePersistables(dir, SaveIdentity.UNKNOWN, SaveIdentity.UNKNOWN);
    }

    /** As {@link #savePersistables(Path)}, recording in every shard's manifest the epochs and steps trained. */
    public void savePersistables(Path dir, long epoch, long step) {
        ParameterServerJob job = psWorker("savePersistables");
        onRankZero("savePersistables " + dir, () -> job.save(dir, epoch, step, false));
    }

    /**
     * As {@link #savePersistables(Path, long, long)}, but incremental: each server writes only the sparse rows changed
     * (and the ids evicted) since its last save or load, in a manifest that names that save's folder as its parent;
     * a server with no earlier save, or whose last one is {@code dir} itself, writes every row. Loading {@code dir}
     * follows the chain back to its full save, so keep the parents' folders. Dense tables are written whole.
     */
    public void savePersistablesIncremental(Path dir, long epoch, long step) {
        ParameterServerJob job = psWorker("savePersistablesIncremental");
        onRankZero("savePersistables " + dir, () -> job.save(dir, epoch, step, true));
    }

    /** Every parameter server's tables, their rows, bytes and evictions: one list per server, in server order. */
    public List<List<TableStats>> serverTableStats() {
        return psWorker("serverTableStats").tableStats();
    }

    /** Whether the strategy's mode is ps: parameter servers hold the trained tables. */
    public boolean isPsMode() {
        return ps != null;
    }

    /**
     * The forward-only program {@code test} (cloned before {@code minimize}) as this job's trainers run it: in
     * parameter-server mode it pulls the tables it reads from the servers; in collective mode it is {@code test}.
     */
    public Program testProgram(Program test) {
        return ps == null ? test : ps.forward(test);
    }

    /** The parameter-server mode of this job (sync, async, half-async or geo); fails in collective mode. */
    public String psMode() {
        return ps("psMode").mode().spelling();
    }

    /** The strategy's parameter-server protocol, or "none" in collective mode. */
    public String protocol() {
        return ps == null ? "none" : ps.protocol();
    }

    /** The number of parameter servers (0 in collective mode). */
    public int serverNum() {
        return role.serverNum();
    }

    private ParameterServerJob ps(String what) {
        if (ps == null) {
            throw new IllegalStateException("Fleet." + what + " is for parameter-server mode, but the strategy's mode is"
                    + " collective; set mode: ps in the strategy");
        }
        return ps;
    }

    private ParameterServerJob server(String what) {
        ParameterServerJob job = ps(what);
        if (!isServer()) {
            throw new IllegalStateException("Fleet." + what + ": " + role.describe() + " is a trainer; only a parameter"
                    + " server (TRAINING_ROLE=PSERVER) serves tables (check fleet.isServer())");
        }
        return job;
    }

    private ParameterServerJob psWorker(String what) {
        ParameterServerJob job = ps(what);
        if (isServer()) {
            throw new IllegalStateException("Fleet." + what + ": " + role.describe() + " is a parameter server;"
                    + " only trainers call it (check fleet.isWorker())");
        }
        connected(what);
        return job;
    }

    public int workerNum() {
        return role.worldSize();
    }

    public int nodeNum() {
        return role.nodeNum();
    }

    public int localRank() {
        return role.localRank();
    }

    public boolean isFirstWorker() {
        return role.isFirst();
    }

    public EffectiveStrategy strategy() {
        return strategy;
    }

    /**
     * The rings this job opens (with the hierarchical form of FLEET_HIERARCHICAL_FORM); compile a program with
     * {@code Pipeline.forStrategy(strategy(), ringLayout())} so that it names only those rings.
     */
    public RingLayout ringLayout() {
        return layout;
    }

    /**
     * What this job gives the kernels of its programs: its rings by ring id (the groups of {@code c_allreduce} and the
     * other collective ops) and the registered memory of gradient buckets. Make executors with it, e.g.
     * {@link ExecutionSettings#executor(Fleet)}; a dry run's has no rings.
     */
    public ExecContext execContext() {
        return context;
    }

    /** Bytes of gradient buckets given memory registered with their ring so far. */
    long registeredBucketBytes() {
        return bucketMemory == null ? 0 : bucketMemory.bytesGiven();
    }

    /** The default group (ring 0), for collectives beyond what {@link #util()} offers. */
    public ProcessGroup processGroup() {
        return connected("processGroup").group;
    }

    /**
     * Returns once every rank has called it; fails after the group's timeout naming the ranks that did not come. In
     * parameter-server mode, after {@link #initWorker}, each trainer first sends what its communicator holds (async's
     * queued gradients, geo's local progress) and waits for the servers to take it, and after the barrier its next
     * pulls read the servers: every trainer's updates from before the barrier are in what it reads after it. Call it
     * before an evaluation or a save that must see the whole job's training (ctr does at each epoch's end).
     */
    public void barrierWorker() {
        ParameterServerJob job = ps != null && ps.workerStarted() ? ps : null;
        if (job != null) {
            job.flush();
        }
        awaitTrainers("barrierWorker");
        if (job != null) {
            job.catchUp();
        }
    }

    /** The trainers' group barrier: returns once every rank came, fails after the timeout naming the missing ones. */
    private void awaitTrainers(String what) {
        connected(what).group.barrier().await(timeout);
    }

    public FleetUtil util() {
        return connected("util").util;
    }

    /** Whether this is a {@code fleetrun --dry_run PROGRAM} process (see {@link #DRY_RUN_ENV}). */
    public boolean isDryRun() {
        return dryRun;
    }

    private Fleet connected(String what) {
        if (isDryRun()) {
            throw new IllegalStateException("Fleet." + what + ": this is a dry run (" + DRY_RUN_ENV
                    + "=1), which opens no process group; a dry run stops in minimize, before any collective");
        }
        if (group == null) {
            throw new IllegalStateException("Fleet." + what + ": " + role.describe() + " is a parameter server, which"
                    + " joins no group of trainers");
        }
        return this;
    }

    /**
     * Wraps an optimizer so that {@code minimize} trains with this job's effective strategy: data-parallel, or against
     * the parameter servers in mode ps.
     */
    public DistributedOptimizer distributedOptimizer(Optimizer optimizer) {
        return distributedOptimizer(optimizer, strategy, layout);
    }

    /** As {@link #distributedOptimizer(Optimizer)} with another strategy resolved for this job's world. */
    public DistributedOptimizer distributedOptimizer(Optimizer optimizer, DistributedStrategy other) {
        EffectiveStrategy resolved = EffectiveStrategy.resolve(other, strategy.world());
        return distributedOptimizer(optimizer, resolved, RingLayout.of(resolved, layout.form()));
    }

    private DistributedOptimizer distributedOptimizer(Optimizer optimizer, EffectiveStrategy effective, RingLayout rings) {
        return ps != null ? new ParameterServerOptimizer(optimizer, ps, isDryRun(), log)
                : new CollectiveOptimizer(optimizer, effective, rings, role.worldSize(), DEFAULT_RING, isDryRun(), log);
    }

    /**
     * Saves the persistable vars of {@code program} (parameters, optimizer moments, beta powers and step counters) from
     * {@code scope} to {@code file} in the safetensors format. Rank 0 writes (atomically; every rank holds the same
     * values in data-parallel training), the others wait for it; every rank returns once the file is complete, or
     * throws if rank 0 could not write it. In a multi-host job {@code file} must be on storage every host sees.
     */
    public void saveCheckpoint(Path file, Scope scope, Program program) {
        onRankZero("saveCheckpoint " + file, () -> SafeTensors.write(file,
                Persistables.of(program, scope, "saveCheckpoint " + file),
                Map.of("format", "fleet4j-checkpoint", "world_size", "" + workerNum())));
    }

    /**
     * Checks before training that {@link #saveCheckpoint} will be able to write {@code file}, so that a missing
     * directory, a directory or an unwritable place fails at once rather than after the last step. Every rank checks
     * (the file must be on storage every host sees, as for {@link #loadCheckpoint}) and learns whether all could, so
     * every rank fails alike, with a {@link CheckpointException}. Leaves no file behind.
     */
    public void checkCheckpointWritable(Path file) {
        checkOnEveryRank(file, () -> SafeTensors.checkWritable(file));
    }

    /**
     * Checks before training that {@link #savePersistables} (and a progress file beside the saves) can write into
     * {@code dir}: a folder that takes new files, or a new one whose parent does. Call it on every process that
     * writes there: each parameter server checks for itself (a server that cannot fails alone, and the launcher stops
     * the job), the trainers check and agree as {@link #checkCheckpointWritable} does. Leaves nothing behind.
     */
    public void checkPersistablesWritable(Path dir) {
        if (isServer()) {
            CheckpointFolder.checkWritable(dir);
        } else {
            checkOnEveryRank(dir, () -> CheckpointFolder.checkWritable(dir));
        }
    }

    /** Runs {@code check} on every trainer; all fail alike, each with its own reason or with another's. */
    private void checkOnEveryRank(Path path, Runnable check) {
        CheckpointException failure = null;
        try {
            check.run();
        } catch (CheckpointException e) {
            failure = e;
        }
        boolean allCould = isDryRun() ? failure == null : util().allReduce(failure == null ? 1L : 0L, ReduceOp.MIN) == 1;
        if (failure != null) {
            throw failure;
        }
        if (!allCould) {
            throw new CheckpointException(path, null, "another rank cannot write it; its log says why");
        }
    }

    /**
     * Loads what {@link #saveCheckpoint} wrote into the persistable vars of {@code program} in {@code scope}, on every
     * rank (run the startup program first). All or nothing: a missing, extra, misshapen or corrupt variable, or a NaN
     * or infinite value, fails naming the file and the variable, and leaves the scope unchanged. The world size may
     * differ from the saver's.
     */
    public void loadCheckpoint(Path file, Scope scope, Program program) {
        loadCheckpoint(file, scope, program, LoadOptions.STRICT);
    }

    /**
     * As {@link #loadCheckpoint(Path, Scope, Program)}, with {@code options} deciding what is refused, e.g.
     * {@code LoadOptions.STRICT.allowingNonFinite()} to inspect the state of a training that diverged.
     */
    public void loadCheckpoint(Path file, Scope scope, Program program, LoadOptions options) {
        SafeTensors.loadInto(file, Persistables.of(program, scope, "loadCheckpoint " + file), options);
    }

    /**
     * As {@link #loadCheckpoint(Path, Scope, Program, LoadOptions)} for a program that {@code runner} runs: the
     * device's values go to the scope first and the device rereads the scope after, so its copies are replaced too.
     */
    public void loadCheckpoint(Path file, Scope scope, Program program, ProgramRunner runner, LoadOptions options) {
        runner.syncToScope(scope);
        loadCheckpoint(file, scope, program, options);
        runner.scopeChanged();
    }

    /**
     * Loads a weights-only safetensors file (a PyTorch state_dict, or {@link Parameters#save}'s output) into the
     * weights of {@code program} (its parameters and batch-norm statistics, see {@link ModelState}) in {@code scope},
     * on every rank, after the startup program ran; the optimizer's state keeps its initial values. Strict by default
     * and all or nothing; {@code options} may skip missing and unexpected names (the report lists them), rename the
     * file's tensors, and allow non-finite values. F16, BF16 and F64 values are converted to the weight's dtype.
     */
    public LoadReport loadParameters(Path file, Scope scope, Program program, ParameterLoadOptions options) {
        return Parameters.load(file, program, scope, options);
    }

    /**
     * As {@link #loadParameters(Path, Scope, Program, ParameterLoadOptions)} for a program that {@code runner} runs,
     * so the device's copies are replaced too (no {@code syncToScope}/{@code scopeChanged} needed around it).
     */
    public LoadReport loadParameters(Path file, Scope scope, Program program, ProgramRunner runner, ParameterLoadOptions options) {
        return Parameters.load(file, program, scope, runner, options);
    }

    /**
     * Saves {@code testProgram} pruned to what computes {@code fetches} from {@code feeds}, with its parameters from
     * {@code scope}, into the folder {@code dir} (created if needed) for {@link #loadInferenceModel}. Rank 0 writes,
     * the others wait for it. In parameter-server mode the tables come from the servers: every server saves its shard
     * to {@code dir/.tables} (a folder on the servers' file system, removed after), and the model holds every dense
     * table and all rows of every sparse table it reads, so it runs on one process without servers.
     */
    public void saveInferenceModel(Path dir, Program testProgram, List<String> feeds, List<String> fetches, Scope scope) {
        if (ps != null && !isServer()) {
            ParameterServerJob job = psWorker("saveInferenceModel");
            onRankZero("saveInferenceModel " + dir, () -> {
                Path staging = createDirectories(dir).resolve(".tables");
                PsInference model = job.inference(testProgram, staging);
                Scope values = new Scope();
                model.values().forEach(values::put);
                scope.names().stream().filter(n -> !model.values().containsKey(n)).forEach(n -> values.put(n, scope.get(n)));
                new InferenceModel(InferenceModel.prune(model.program(), feeds, fetches), values, feeds, fetches).write(dir);
                deleteTree(staging);
            });
            return;
        }
        Program pruned = InferenceModel.prune(testProgram, feeds, fetches);
        onRankZero("saveInferenceModel " + dir, () -> new InferenceModel(pruned, scope, feeds, fetches).write(createDirectories(dir)));
    }

    private static Path createDirectories(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("saveInferenceModel: folder " + dir + " cannot be made: " + e, e);
        }
    }

    private static void deleteTree(Path dir) {
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("saveInferenceModel: the servers' tables in " + dir + " cannot be removed: " + e, e);
        }
    }

    /**
     * Like {@link #saveInferenceModel(Path, Program, List, List, Scope)}, in the given format: {@code path} is a folder
     * for {@link InferenceModel.Format#FLEET4J} and a file for {@link InferenceModel.Format#ONNX}. For ONNX every rank
     * translates the program first, so an op with no ONNX form fails everywhere, naming the op, and no file is written.
     */
    public void saveInferenceModel(Path path, Program testProgram, List<String> feeds, List<String> fetches, Scope scope,
                                   InferenceModel.Format format) {
        if (format == InferenceModel.Format.FLEET4J) {
            saveInferenceModel(path, testProgram, feeds, fetches, scope);
            return;
        }
        var onnx = new InferenceModel(InferenceModel.prune(testProgram, feeds, fetches), scope, feeds, fetches).toOnnx();
        onRankZero("saveInferenceModel " + path, () -> org.fleet4j.fleet.onnx.OnnxExporter.write(onnx, path));
    }

    /** The program, parameters, feeds and fetches that {@link #saveInferenceModel} wrote to {@code dir}. */
    public static InferenceModel loadInferenceModel(Path dir) {
        return InferenceModel.load(dir);
    }

    /** Runs {@code write} on rank 0 and tells every rank whether it succeeded, so no rank waits on a failed writer. */
    private void onRankZero(String what, Runnable write) {
        RuntimeException failure = null;
        if (isFirstWorker()) {
            try {
                write.run();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        long ok = util().allReduce(failure == null ? 1L : 0L, ReduceOp.MIN);
        if (failure != null) {
            throw failure;
        }
        if (ok == 0) {
            throw new IllegalStateException(what + ": rank 0 failed to write it; its log says why");
        }
    }

    /** Leaves the job: releases every ring, then the default group (sockets, shared memory, the store on rank 0). */
    @Override
    public void close() {
        if (ps != null) {
            ps.closeWorker();
        }
        if (group != null) {
            rings.close();
            group.close();
        }
    }
}
