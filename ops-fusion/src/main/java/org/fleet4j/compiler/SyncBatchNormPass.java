package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.SYNC_BATCH_NORM;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.ops.fused.SyncBatchNormOps;
import org.fleet4j.core.tensor.DType;

/**
 * {@code sync_batch_norm}: every training {@code batch_norm} (NCHW or [N, C]) takes its statistics over all ranks:
 * {@code sync_bn_stats}, a {@code c_allreduce} (sum) of them on ring 0, {@code sync_bn_apply}; its grad likewise
 * reduces the per-channel sums of dY and dY xhat before {@code sync_bn_grad_apply}. N ranks with batch b then
 * normalise exactly as one process with batch N b.
 */
public final class SyncBatchNormPass implements Pass {
    public static final String NAME = "sync_batch_norm";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<String> notes = new ArrayList<>();
        Program result = ProgramEdits.copyOf(program);
        Block out = result.globalBlock();
        Map<String, String> statsOf = new LinkedHashMap<>();
        List<Op> rebuilt = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.type().equals("batch_norm") && !op.boolAttr("is_test") && op.stringAttr("data_layout").equals("NCHW")) {
                String x = op.in("X");
                String stats = result.uniqueName(x + "@SYNC_BN_STATS");
                out.createVar(stats, DType.F64, 3 * block.var(x).shape()[1]);
                statsOf.put(op.out("SavedMean"), stats);
                rebuilt.add(new Op(SyncBatchNormOps.STATS, Map.of("X", List.of(x)), Map.of("Stats", List.of(stats)), Map.of()));
                rebuilt.add(allreduce(stats));
                Map<String, List<String>> in = new LinkedHashMap<>(op.inputs());
                in.put("Stats", List.of(stats));
                rebuilt.add(new Op(SyncBatchNormOps.APPLY, in, op.outputs(),
                        Map.of("momentum", op.floatAttr("momentum"), "epsilon", op.floatAttr("epsilon"))));
                notes.add("op #" + i + " batch_norm(" + x + ") takes its statistics over all ranks");
            } else if (op.type().equals("batch_norm_grad") && statsOf.containsKey(op.in("SavedMean"))) {
                String x = op.in("X");
                String gradStats = result.uniqueName(x + "@SYNC_BN_GRAD_STATS");
                out.createVar(gradStats, DType.F64, 2 * block.var(x).shape()[1]);
                Map<String, List<String>> gin = new LinkedHashMap<>();
                for (String s : List.of("X", "SavedMean", "SavedVariance", "Y@GRAD")) {
                    gin.put(s, op.input(s));
                }
                rebuilt.add(new Op(SyncBatchNormOps.GRAD_STATS, gin, Map.of("GradStats", List.of(gradStats)), Map.of()));
                rebuilt.add(allreduce(gradStats));
                Map<String, List<String>> in = new LinkedHashMap<>(gin);
                in.put("Scale", op.input("Scale"));
                in.put("Stats", List.of(statsOf.get(op.in("SavedMean"))));
                in.put("GradStats", List.of(gradStats));
                Map<String, List<String>> outs = new LinkedHashMap<>();
                for (String s : List.of("X@GRAD", "Scale@GRAD", "Bias@GRAD")) {
                    if (!op.output(s).isEmpty()) {
                        outs.put(s, op.output(s));
                    }
                }
                rebuilt.add(new Op(SyncBatchNormOps.GRAD_APPLY, in, outs, Map.of()));
            } else {
                rebuilt.add(op);
            }
        }
        if (notes.isEmpty()) {
            return PassResult.unchanged(program, "nothing synchronised: no training batch_norm in NCHW or [N, C] layout");
        }
        ProgramEdits.replaceOps(out, rebuilt);
        ProgramEdits.removeUnusedTemps(out);
        return new PassResult(result, notes);
    }

    private static Op allreduce(String var) {
        return new Op(CollectiveOpTypes.ALLREDUCE, Map.of("X", List.of(var)), Map.of("Out", List.of(var)),
                Map.of("ring_id", 0, "reduce", "sum"));
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 600, List.of(any(SYNC_BATCH_NORM)),
                    c -> c.knob(SYNC_BATCH_NORM), c -> new SyncBatchNormPass());
        }
    }
}
