package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.FP16_ALLREDUCE;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.core.ops.fused.AllreduceCastOp;
import org.fleet4j.core.tensor.DType;

/**
 * {@code fp16_allreduce}: every in-place {@code c_allreduce} of a float32 tensor (a gradient, or a bucket after
 * fuse_all_reduce_ops) sends bfloat16 instead: cast to a bfloat16 copy, allreduce that, cast back into the original
 * tensor. Half the bytes on the wire, at bfloat16's precision (8 significant bits) for the reduced sum.
 */
public final class Fp16AllreducePass implements Pass {
    public static final String NAME = "fp16_allreduce";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<Integer> targets = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (op.type().equals(CollectiveOpTypes.ALLREDUCE) && op.in("X").equals(op.out("Out"))
                    && block.var(op.in("X")).dtype() == DType.F32
                    && block.var(op.in("X")).kind() == org.fleet4j.core.ir.VarKind.DENSE) {
                targets.add(i);
            }
        }
        if (targets.isEmpty()) {
            return PassResult.unchanged(program, "nothing cast: no in-place float32 c_allreduce (a world of one has none)");
        }
        Program result = ProgramEdits.copyOf(program);
        Block out = result.globalBlock();
        List<Op> rebuilt = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!targets.contains(i)) {
                rebuilt.add(op);
                continue;
            }
            String x = op.in("X");
            Var v = block.var(x);
            String half = result.uniqueName(x + "@BF16");
            out.createVar(half, DType.BF16, v.shape());
            rebuilt.add(new Op(AllreduceCastOp.TYPE, Map.of("X", List.of(x)), Map.of("Out", List.of(half)),
                    Map.of("out_dtype", DType.BF16.displayName())));
            rebuilt.add(new Op(op.type(), Map.of("X", List.of(half)), Map.of("Out", List.of(half)), op.attrs()));
            rebuilt.add(new Op(AllreduceCastOp.TYPE, Map.of("X", List.of(half)), Map.of("Out", List.of(x)),
                    Map.of("out_dtype", DType.F32.displayName())));
            long n = 1;
            for (long d : v.shape()) {
                n *= Math.max(d, 1);
            }
            bytes += n * 2;
        }
        ProgramEdits.replaceOps(out, rebuilt);
        return new PassResult(result, List.of(targets.size() + " c_allreduce ops send bfloat16: " + bytes
                + " bytes per step instead of " + 2 * bytes));
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 510, List.of(any(FP16_ALLREDUCE)),
                    c -> c.knob(FP16_ALLREDUCE), c -> new Fp16AllreducePass());
        }
    }
}
