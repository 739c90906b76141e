package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ops.fused.AllreduceCastOp;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.junit.jupiter.api.Test;

class Fp16AllreducePassTest {
    private static Compilation compile(Nets.Net net) {
        DistributedStrategy s = new DistributedStrategy().fp16Allreduce(true);
        return Pipeline.forStrategy(EffectiveStrategy.resolve(s, new World(1, 2, "cpu"))).run(net.main());
    }

    @Test
    void eachBucketIsSentAsBfloat16AndCastBackIntoItself() {
        Nets.Net net = Nets.mlpWithAllreduce("relu", new int[]{16}, new SGD(0.1));
        Compilation c = compile(net);
        assertTrue(c.describe().startsWith("compiler pipeline: fuse_all_reduce_ops -> fp16_allreduce\n"), c.describe());
        List<Op> ops = c.program().globalBlock().ops();
        int at = Nets.opTypes(c.program()).indexOf("c_allreduce");
        Op allreduce = ops.get(at);
        assertEquals(DType.BF16, c.program().globalBlock().var(allreduce.in("X")).dtype());
        assertEquals(AllreduceCastOp.TYPE, ops.get(at - 1).type());
        assertEquals(allreduce.in("X"), ops.get(at - 1).out("Out"));
        assertEquals(AllreduceCastOp.TYPE, ops.get(at + 1).type());
        String bucket = ops.get(at - 1).in("X");
        assertEquals(bucket, ops.get(at + 1).out("Out"));
        assertEquals(ops.get(at - 2).out("Bucket"), bucket, "the bucket gathered just before is what is sent");
        // 8 x 16 + 16 + 16 x 3 + 3 = 195 gradient floats
        assertTrue(c.reports().getLast().notes().getFirst().startsWith("1 c_allreduce ops send bfloat16: 390 bytes per step"
                + " instead of 780"), c.reports().getLast().notes().toString());
    }

    @Test
    void trainsAsTheFloat32ProgramWithinBfloat16Precision() {
        Nets.Net net = Nets.mlpWithAllreduce("tanh", new int[]{16}, new SGD(0.2));
        Program p = compile(net).program();
        Nets.Trained plain = Nets.train(net.main(), net.startup(), net.loss(), 8);
        Nets.Trained half = Nets.train(p, net.startup(), net.loss(), 8);
        Same.runs(plain, half, 1e-2f);
    }

    @Test
    void withoutAllreducesNothingChanges() {
        Nets.Net net = Nets.mlp("relu", new int[]{8}, x -> new SGD(0.1));
        PassResult r = new Fp16AllreducePass().apply(net.main());
        assertSame(net.main(), r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing cast"), r.notes().toString());
    }
}
