package org.fleet4j.fleet;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.fleet4j.core.drift.RoundingNoise;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * A rank program for {@link OverlapTrainingTest}, run under the real launcher: trains the same MLP from the same
 * start under several execution strategies (program order without overlap; overlapped allreduces on one and on
 * three threads; synchronous allreduces on three threads; buckets overlapped on three threads; temporaries dropped
 * every 2 steps), each through {@link ExecutionSettings}, and writes every run's losses, final parameters and op
 * types to OUT_DIR/rank-N.properties; the overlapped single-thread run also writes its timeline to
 * OUT_DIR/timeline.rankN.json; then program order again as {@link #NOISE}. Arguments: OUT_DIR STEPS.
 */
public final class OverlapProbe {
    private OverlapProbe() {
    }

    static Map<String, DistributedStrategy> configurations() {
        Map<String, DistributedStrategy> c = new LinkedHashMap<>();
        c.put("program_order", new DistributedStrategy().fuseAllReduceOps(false)
                .set(StrategySchema.BUILD_ENABLE_SEQUENTIAL_EXECUTION, true));
        c.put("overlap", new DistributedStrategy().fuseAllReduceOps(false).syncNcclAllreduce(false).threadNum(1));
        c.put("overlap_3_threads", new DistributedStrategy().fuseAllReduceOps(false).syncNcclAllreduce(false).threadNum(3));
        c.put("sync_3_threads", new DistributedStrategy().fuseAllReduceOps(false).threadNum(3));
        c.put("buckets_overlap_3_threads", new DistributedStrategy().fuseGradSizeInMB(1).fuseGradSizeInTFLOPS(2)
                .syncNcclAllreduce(false).threadNum(3));
        c.put("drop_scope_every_2", new DistributedStrategy().fuseAllReduceOps(false).syncNcclAllreduce(false)
                .set(StrategySchema.EXEC_NUM_ITERATION_PER_DROP_SCOPE, 2));
        return c;
    }

    /** The run that measures the float32 noise: program order from a start one ulp away ({@link RoundingNoise}). */
    static final String NOISE = "program_order_one_ulp_away";

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args[0]);
        int steps = Integer.parseInt(args[1]);
        Properties result = new Properties();
        try (Fleet fleet = Fleet.init()) {
            int rank = fleet.workerIndex();
            for (var e : configurations().entrySet()) {
                train(fleet, e.getKey(), e.getValue(), steps, 0, out, result);
            }
            // program order again from a start one ulp away: the float32 noise the others are judged by
            train(fleet, NOISE, configurations().get("program_order"), steps, 1, out, result);
        }
        StringWriter w = new StringWriter();
        result.store(w, null);
        Files.writeString(out.resolve("rank-" + System.getenv("FLEET_RANK") + ".properties"), w.toString());
    }

    /** Trains the MLP under {@code strategy}, its start moved {@code ulps} ulps; records the run as NAME.* in {@code result}. */
    private static void train(Fleet fleet, String name, DistributedStrategy strategy, int steps, int ulps, Path out,
                              Properties result) throws IOException {
        int rank = fleet.workerIndex();
        Program main = new Program().setRandomSeed(21);
        Program startup = new Program().setRandomSeed(21);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 10);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.fc(nn.fc(nn.fc(x, 32, "relu"), 24, "tanh"), 16, "relu");
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(h, 4, null), y));
        fleet.distributedOptimizer(new Momentum(0.05, 0.9f), strategy).minimize(loss);
        EffectiveStrategy effective = EffectiveStrategy.resolve(strategy, fleet.strategy().world());
        List<Float> losses = new ArrayList<>();
        Scope scope = new Scope();
        try (Executor exe = new Executor(ExecutionSettings.of(effective), fleet.execContext())) {
            exe.run(startup, scope);
            RoundingNoise.perturbParameters(main, scope, ulps, 1);
            Timeline timeline = name.equals("overlap") ? Timeline.attach(exe, main, rank) : null;
            for (int step = 0; step < steps; step++) {
                losses.add(exe.run(main, scope, SeededShards.shard(500 + step, rank, fleet.workerNum()), List.of(loss.name()))
                        .get(loss.name()).getFloat(0));
            }
            if (timeline != null) {
                timeline.write(Timeline.rankFile(out.resolve("timeline.json"), rank));
            }
            result.setProperty(name + ".threads", "" + exe.options().numThreads());
        }
        result.setProperty(name + ".losses", losses.toString());
        result.setProperty(name + ".params", params(main, scope));
        result.setProperty(name + ".ops", main.globalBlock().ops().stream().map(op -> op.type())
                .collect(Collectors.joining(",")));
    }

    /** "name=BITS,BITS,... name=...": every parameter's float bits. */
    private static String params(Program main, Scope scope) {
        List<String> entries = new ArrayList<>();
        for (Var v : main.globalBlock().vars()) {
            if (v.isParameter()) {
                List<String> bits = new ArrayList<>();
                for (float f : scope.get(v.name()).toFloatArray()) {
                    bits.add("" + Float.floatToIntBits(f));
                }
                entries.add(v.name() + "=" + String.join(",", bits));
            }
        }
        return String.join(" ", entries);
    }
}
