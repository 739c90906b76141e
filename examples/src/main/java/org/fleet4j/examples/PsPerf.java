package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.fleet.cli.LogLevelOption;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.cli.TensorBoardOption;
import org.fleet4j.fleet.metrics.RankMetric;
import org.fleet4j.fleet.metrics.StepMetrics;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import org.fleet4j.pserver.compile.CommunicatorSettings;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseSlicing;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.fleet4j.pserver.worker.PsWorker;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The built-in {@code ps_perf} program: how fast a parameter-server transport moves sparse rows. Under
 * {@code bin/fleetrun --server_num S --worker_num W ps_perf} the servers hold one table of {@code --ids} rows of
 * {@code --dim} floats (every row created before serving); each worker, step after step, pulls the rows of a batch of
 * Zipf(1.1) ids (deduplicated) and pushes gradients of the same shape, which the servers apply as they come (no
 * barriers: the transport is measured, not a training mode). {@code --dense N} adds N dense tensors of 4-256 KB to
 * every step (issue 15's dense-heavy variant). With {@code tensor_fuse} ({@code --tensor_fuse} or the strategy's) or a
 * star protocol a step's pulls and pushes are fused, one message per server each, as the PS compile step does for a
 * program; otherwise each tensor goes on its own. Worker 0 writes summary.json: unique keys per second over all workers,
 * MB/s, step latency percentiles and the bytes each step put on the wire.
 */
@AutoService(NamedProgram.class)
@Command(name = "ps_perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Measures parameter-server pull/push throughput on a Zipf(1.1) workload.")
public final class PsPerf implements Callable<Integer>, NamedProgram {
    @Override
    public String programName() {
        return "ps_perf";
    }

    static final double ZIPF_EXPONENT = 1.1;
    static final String TABLE = "ps_perf.emb";
    private static final int MAX_IDS = 100_000_000;
    private static final int MIN_DENSE_BYTES = 4 << 10;
    private static final int MAX_DENSE_BYTES = 256 << 10;
    private static final int PREFILL_CHUNK = 4096;
    private static final Duration SERVE_POLL = Duration.ofSeconds(30);

    @Option(names = "--ids", description = "rows of the sparse table; ids are drawn from [0, ids) (default ${DEFAULT-VALUE})")
    long ids = 1_000_000;
    @Option(names = "--dim", description = "floats per row (default ${DEFAULT-VALUE})")
    int dim = 16;
    @Option(names = "--batch", description = "ids drawn per step per worker, before deduplication; 0 with --dense for dense only (default ${DEFAULT-VALUE})")
    int batch = 4096;
    @Option(names = "--steps", description = "timed steps per worker (default ${DEFAULT-VALUE})")
    int steps = 2000;
    @Option(names = "--warmup", description = "untimed steps first, so the JIT has compiled the hot paths on both sides (default ${DEFAULT-VALUE})")
    int warmup = 3000;
    @Option(names = "--batches", description = "distinct batches drawn (and deduplicated) before timing; the steps go round them (default ${DEFAULT-VALUE})")
    int batches = 64;
    @Option(names = "--optimizer", description = "the servers' update: sgd, momentum, adagrad or adam (default ${DEFAULT-VALUE})")
    String optimizer = "sgd";
    @Option(names = "--lr", description = "learning rate of the servers' update (default ${DEFAULT-VALUE})")
    double lr = 0.01;
    @Option(names = "--dense", description = "dense tensors pulled and pushed per step, 4-256 KB each, sizes drawn from --seed (default ${DEFAULT-VALUE})")
    int dense = 0;
    @Option(names = "--protocol", description = "the transport, overriding the strategy's protocol (default: the strategy's, grpc)")
    String protocol;
    @Option(names = "--tensor_fuse", arity = "0..1", fallbackValue = "true",
            description = "fuse a step's pulls and pushes, one message per server each: true or false (default: the"
                    + " strategy's tensor_fuse; star_server and star_server_lite always fuse)")
    String tensorFuse;
    @Mixin
    SeedOption seed;
    @Mixin
    LogDirOption logDir;
    @Mixin
    TensorBoardOption tensorboard;
    @Mixin
    LogLevelOption logLevel;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("ps_perf", new PsPerf(), args));
    }

    @Override
    public Integer call() throws Exception {
        validate();
        DistributedStrategy strategy = strategy();
        String transportName = protocol != null ? protocol : strategy.get(StrategySchema.PROTOCOL);
        PsTransport transport = transport(transportName);
        // the flags go into the strategy Fleet.init gets, so that its effective strategy and transport lines say what runs
        strategy.set(StrategySchema.PROTOCOL, transport.protocol());
        if (tensorFuse != null) {
            strategy.tensorFuse(Boolean.parseBoolean(tensorFuse));
        }
        ServerOptimizer update = serverOptimizer();
        try (Fleet fleet = Fleet.init(strategy)) {
            Role role = fleet.role();
            if (role.serverNum() == 0) {
                throw new IllegalArgumentException("ps_perf needs parameter servers: run it as bin/fleetrun"
                        + " --server_num 1 --worker_num 2 ps_perf");
            }
            boolean fused = fuses(strategy);
            PsPlan plan = plan(role.serverNum(), update, transport.protocol(), fused,
                    CommunicatorSettings.of(strategy));
            if (fleet.isDryRun()) {
                System.out.println(plan.describe());
                return 0;
            }
            // Fleet.init has said already if the job runs without a token (FLEET_INSECURE=1)
            PsOptions options = new PsOptions(null, GroupOptions.DEFAULT_TIMEOUT, JobToken.fromEnvironment(System.getenv(),
                    role.workerNum() + role.serverNum(), role.publicJobFacts(), warning -> { }));
            if (fleet.isServer()) {
                serve(role, plan, transport, options);
                return 0;
            }
            return work(fleet, role, plan, transport, options, fused);
        }
    }

    private void validate() {
        if (ids < 1 || ids > MAX_IDS) {
            throw new IllegalArgumentException("--ids must be between 1 and " + MAX_IDS + ", got " + ids);
        }
        if (dim < 1) {
            throw new IllegalArgumentException("--dim must be at least 1, got " + dim);
        }
        if (batch < 0 || (batch == 0 && dense == 0)) {
            throw new IllegalArgumentException("--batch must be at least 1 (or 0 with --dense), got " + batch);
        }
        if (steps < 1) {
            throw new IllegalArgumentException("--steps must be at least 1, got " + steps);
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("--warmup must be at least 0, got " + warmup);
        }
        if (batches < 1) {
            throw new IllegalArgumentException("--batches must be at least 1, got " + batches);
        }
        if (dense < 0) {
            throw new IllegalArgumentException("--dense must be at least 0, got " + dense);
        }
        if (tensorFuse != null && !tensorFuse.equals("true") && !tensorFuse.equals("false")) {
            throw new IllegalArgumentException("--tensor_fuse must be true or false, got " + Quoted.of(tensorFuse));
        }
        if (!(lr > 0)) {
            throw new IllegalArgumentException("--lr must be positive, got " + lr);
        }
    }

    /**
     * The job's strategy (fleetrun --strategy) in parameter-server mode with {@code a_sync: true}: ps_perf runs no
     * training mode, its plan is async (pushes applied as they come, no barriers), and the effective strategy that
     * Fleet.init prints says so.
     */
    private static DistributedStrategy strategy() {
        String file = System.getenv("FLEET_STRATEGY");
        DistributedStrategy s = file == null || file.isBlank() ? new DistributedStrategy()
                : DistributedStrategy.load(Path.of(file));
        return s.mode(Mode.PS).aSync(true);
    }

    /**
     * As the PS compile step decides for a program: tensor_fuse, or a star protocol's pull/push semantics (the
     * strategy holds --protocol and --tensor_fuse by now).
     */
    private static boolean fuses(DistributedStrategy strategy) {
        return PsCompiler.fuses(strategy.protocol(), strategy.tensorFuse());
    }

    private static PsTransport transport(String name) {
        try {
            return PsTransport.forProtocol(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--protocol " + name + ": " + e.getMessage(), e);
        }
    }

    private ServerOptimizer serverOptimizer() {
        float rate = (float) lr;
        return switch (optimizer) {
            case "sgd" -> new ServerOptimizer.Sgd(rate, 0f);
            case "momentum" -> new ServerOptimizer.Momentum(rate, 0.9f, false, 0f);
            case "adagrad" -> new ServerOptimizer.Adagrad(rate, 1e-6f);
            case "adam" -> new ServerOptimizer.Adam(rate, 0.9f, 0.999f, 1e-8f);
            default -> throw new IllegalArgumentException("--optimizer must be sgd, momentum, adagrad or adam, got '"
                    + optimizer + "'");
        };
    }

    /** The tables, the same in every process of the job: one sparse table and --dense dense ones. */
    PsPlan plan(int servers, ServerOptimizer update, String protocolName, boolean fused,
                CommunicatorSettings communicator) {
        SparseTableConfig table = new SparseTableConfig(TABLE, dim, update, RowInitializer.uniform(-0.01f, 0.01f, seed.seed()));
        List<DenseTableConfig> denseTables = new ArrayList<>();
        int[] floats = denseFloats();
        for (int k = 0; k < floats.length; k++) {
            denseTables.add(new DenseTableConfig("ps_perf.dense" + k, new long[]{floats[k]}, update,
                    RowInitializer.constant(0f)));
        }
        return new PsPlan(PsMode.ASYNC, servers, DenseSlicing.DEFAULT_MIN_BLOCK_SIZE, new Program(), new Program(),
                denseTables, List.of(table), protocolName, fused, communicator);
    }

    /** Floats of each dense tensor: log-uniform between 4 and 256 KB, from --seed. */
    private int[] denseFloats() {
        SplittableRandom rnd = new SplittableRandom(seed.seed() ^ 0xD15EA5EL);
        int[] floats = new int[dense];
        double span = Math.log((double) MAX_DENSE_BYTES / MIN_DENSE_BYTES);
        for (int k = 0; k < dense; k++) {
            floats[k] = (int) (MIN_DENSE_BYTES * Math.exp(rnd.nextDouble() * span)) / Float.BYTES;
        }
        return floats;
    }

    private void serve(Role role, PsPlan plan, PsTransport transport, PsOptions options) throws InterruptedException {
        TableShard shard = plan.shard(role.serverIndex());
        long t0 = System.nanoTime();
        long rows = batch == 0 ? 0 : prefill(shard, role.serverIndex(), role.serverNum());
        System.out.printf(Locale.ROOT, "ps_perf: server %d created its %,d rows of %s in %.1f s%n", role.serverIndex(),
                rows, TABLE, (System.nanoTime() - t0) / 1e9);
        try (PsServer server = transport.serve(shard, options.withEndpoint(role.serverEndpoint()))) {
            System.out.println("ps_perf: server " + role.serverIndex() + " serves on " + server.endpoint() + " over "
                    + transport.protocol());
            while (!server.awaitStop(SERVE_POLL)) {
                // serving until worker 0's stop
            }
            System.out.println("ps_perf: server " + role.serverIndex() + " stopped by the workers");
        }
    }

    /** Creates every row of this server's share up front, as the peer's dense tensor has all of its rows. */
    private long prefill(TableShard shard, int server, int servers) {
        Tensor chunk = Tensor.zeros(DType.I64, PREFILL_CHUNK);
        Tensor out = Tensor.zeros(DType.F32, PREFILL_CHUNK, dim);
        int n = 0;
        long created = 0;
        for (long id = 0; id < ids; id++) {
            if (KeyHash.serverOf(id, servers) != server) {
                continue;
            }
            chunk.setLong(n++, id);
            if (n == PREFILL_CHUNK) {
                shard.pullSparse(TABLE, chunk.segment(), n, out.segment());
                created += n;
                n = 0;
            }
        }
        if (n > 0) {
            shard.pullSparse(TABLE, chunk.segment(), n, out.segment());
            created += n;
        }
        return created;
    }

    private int work(Fleet fleet, Role role, PsPlan plan, PsTransport transport, PsOptions options, boolean fused)
            throws Exception {
        int worker = role.workerIndex();
        List<PsConnection> connections = transport.connectAll(role.serverEndpoints(), options);
        try (PsWorker client = new PsWorker(plan, connections, options.deadline(), worker, role.workerNum())) {
            PsPerfWorkload load = new PsPerfWorkload(plan, batch, batches, ids, seed.seed(), worker, fused);
            if (worker == 0) {
                System.out.printf(Locale.ROOT, "ps_perf: %s, %d server(s) x %d worker(s); table %,d ids x %d floats"
                                + " (%s); %,d Zipf(%.1f) ids per step, %.0f unique on average; %d dense tensor(s),"
                                + " %,d bytes; %s, %d call(s) per step; %d warm-up and %d timed steps%n",
                        transport.protocol(),
                        role.serverNum(), role.workerNum(), ids, dim, optimizer, batch, ZIPF_EXPONENT,
                        load.meanUnique(), dense, load.denseBytes(),
                        fused ? "fused" : "one call per tensor", load.callsPerStep(), warmup, steps);
            }
            PsPerfWorkload.Totals warm;
            PsPerfWorkload.Totals timed;
            try (StepMetrics metrics = tensorboard.open(worker)) {
                warm = load.run(client, connections, warmup, null);
                fleet.barrierWorker();
                metrics.stepStarted();
                timed = load.run(client, connections, steps, onStep(worker, metrics));
            }
            report(fleet, role, transport.protocol(), load, warm, timed);
            fleet.barrierWorker();
            if (worker == 0) {
                client.eachServer("stop", PsConnection::stop);
            }
        }
        return 0;
    }

    /** Worker 0 prints its progress; every worker gives its steps to {@code metrics} when anyone reads them. */
    private PsPerfWorkload.Progress onStep(int worker, StepMetrics metrics) {
        if (!metrics.wanted()) {
            return worker == 0 ? this::progress : null;
        }
        long[] before = new long[2]; // keys and nanos at the end of the step before
        return (done, t) -> {
            metrics.stepFinished(done, Double.NaN, 0, 0);
            double keysPerSec = (t.keys() - before[0]) / ((t.nanos() - before[1]) / 1e9);
            before[0] = t.keys();
            before[1] = t.nanos();
            metrics.set(RankMetric.PS_KEYS_PER_SECOND, keysPerSec);
            metrics.scalar("ps/keys_per_sec", keysPerSec, done);
            if (worker == 0) {
                progress(done, t);
            }
        };
    }

    private void progress(int done, PsPerfWorkload.Totals t) {
        if (done % Math.max(1, steps / 10) == 0 || done == steps) {
            System.out.printf(Locale.ROOT, "ps_perf: step %d/%d  %,.0f unique keys/s on worker 0, %.3f ms/step%n",
                    done, steps, t.keys() / (t.nanos() / 1e9), t.nanos() / 1e6 / done);
        }
    }

    private void report(Fleet fleet, Role role, String protocolName, PsPerfWorkload load, PsPerfWorkload.Totals warm,
                        PsPerfWorkload.Totals t) throws Exception {
        double[] sums = fleet.util().allReduce(new double[]{t.keys(), t.payloadBytes(), t.pullWire(), t.pushWire(),
                t.denseWire(), t.pullPayload()}, ReduceOp.SUM);
        double seconds = fleet.util().allReduce(t.nanos() / 1e9, ReduceOp.MAX);
        double p50 = fleet.util().allReduce(t.percentileMs(0.50), ReduceOp.MAX);
        double p99 = fleet.util().allReduce(t.percentileMs(0.99), ReduceOp.MAX);
        long counted = fleet.util().allReduce(t.wireCounted() ? 1L : 0L, ReduceOp.MIN);
        if (role.workerIndex() != 0) {
            return;
        }
        int workers = role.workerNum();
        double stepsAll = (double) steps * workers;
        double keysPerSec = sums[0] / seconds;
        double mbPerSec = sums[1] / seconds / 1e6;
        Summary s = new Summary().put("program", "ps_perf").put("protocol", protocolName)
                .put("servers", role.serverNum()).put("workers", workers).put("ids", ids).put("dim", dim)
                .put("batch", batch).put("dense", dense).put("dense_bytes", load.denseBytes())
                .put("tensor_fuse", load.fused()).put("calls_per_step", load.callsPerStep())
                .put("optimizer", optimizer).put("steps", steps).put("warmup", warmup).put("seed", seed.seed())
                .put("unique_per_step", sums[0] / stepsAll).put("keys_per_sec", keysPerSec).put("mb_per_sec", mbPerSec)
                .put("p50_ms", p50).put("p99_ms", p99).put("seconds", seconds);
        String line;
        if (counted == 1) {
            double perPull = sums[2] / stepsAll;
            double pullPayload = sums[5] / stepsAll;
            s.put("wire_bytes_per_step", (sums[2] + sums[3] + sums[4]) / stepsAll)
                    .put("wire_bytes_per_pull", perPull).put("wire_bytes_per_push", sums[3] / stepsAll)
                    .put("pull_payload_bytes", pullPayload)
                    .put("pull_wire_over_payload", pullPayload == 0 ? 0 : perPull / pullPayload)
                    .put("wire_measured_by", "the worker's connections: bytes written to and read from their sockets");
            line = String.format(Locale.ROOT, "; %,.0f wire bytes per step (a pull %.4fx its payload)",
                    (sums[2] + sums[3] + sums[4]) / stepsAll, pullPayload == 0 ? 0 : perPull / pullPayload);
        } else {
            s.put("wire_measured_by", "not counted: transport " + protocolName + " has no byte counter");
            line = "; wire bytes not counted by " + protocolName;
        }
        System.out.printf(Locale.ROOT, "ps_perf: %s %d server(s) x %d worker(s): %,.0f unique keys/s, %.1f MB/s,"
                        + " step p50 %.3f ms, p99 %.3f ms%s%n", protocolName, role.serverNum(), workers, keysPerSec,
                mbPerSec, p50, p99, line);
        Path dir = logDir.folder();
        Files.createDirectories(dir);
        s.put("warmup_seconds", warm.nanos() / 1e9).write(dir.resolve("summary.json"));
        System.out.println("ps_perf: wrote " + dir.resolve("summary.json"));
    }
}
