package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.BFloat16;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** cast and its gradient, the loss-scaling ops, and matmul on bfloat16 operands. */
class CastOpsTest {

    @Test
    void castRoundsToNearestBf16AndBackExactly() {
        Tensor x = Tensor.of(new float[]{1f, 1.00390625f, 1.01171875f, -3.3f, Float.POSITIVE_INFINITY, Float.NaN, 1e-40f}, 7);
        Tensor bf = OneOp.of("cast").in("X", x).attr("out_dtype", "bfloat16").run("Out");
        assertEquals(DType.BF16, bf.dtype());
        for (int i = 0; i < 7; i++) {
            assertEquals(BFloat16.toFloat(BFloat16.fromFloat(x.getFloat(i))), bf.getFloat(i), "element " + i);
        }
        assertEquals(1f, bf.getFloat(1), "1 + 2^-8 is a tie, rounded to the even 1");
        assertEquals(1.015625f, bf.getFloat(2), "1 + 3 * 2^-8 is a tie, rounded to the even 1 + 2^-6");
        Tensor back = OneOp.of("cast").in("X", bf).attr("out_dtype", "float32").run("Out");
        assertEquals(DType.F32, back.dtype());
        for (int i = 0; i < 7; i++) {
            assertEquals(bf.getFloat(i), back.getFloat(i), "element " + i + " widens exactly");
        }
    }

    @Test
    void castGradCastsTheGradientBackToTheInputsDtype() {
        Tensor x = TestTensors.uniform(3, 4, 5);
        Tensor g = OneOp.of("cast").in("X", TestTensors.uniform(4, 4, 5)).attr("out_dtype", "bfloat16").run("Out");
        Tensor dx = OneOp.of("cast_grad").in("X", x).in("Out@GRAD", g).attr("out_dtype", "bfloat16").run("X@GRAD");
        assertEquals(DType.F32, dx.dtype());
        for (int i = 0; i < 20; i++) {
            assertEquals(g.getFloat(i), dx.getFloat(i), "element " + i);
        }
    }

    @Test
    void castToFloat16OrAnIntegerIsRefusedNamingTheDtype() {
        IrException fp16 = assertThrows(IrException.class,
                () -> OneOp.of("cast").in("X", Tensor.of(new float[]{1}, 1)).attr("out_dtype", "float16").program());
        assertTrue(fp16.getMessage().contains("float16 exists only in GPU kernels"), fp16.getMessage());
        IrException integer = assertThrows(IrException.class,
                () -> OneOp.of("cast").in("X", Tensor.of(new float[]{1}, 1)).attr("out_dtype", "int64").program());
        assertTrue(integer.getMessage().contains("'int64' is not a float dtype"), integer.getMessage());
    }

    @Test
    void checkFiniteAndUnscaleDividesInPlaceAndFlagsInfAndNan() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("g0", DType.F32, 2, 3).setData(true);
        b.createVar("g1", DType.F32, 4).setData(true);
        b.createVar("scale", DType.F32, 1).setData(true);
        b.appendOp("check_finite_and_unscale", Map.of("X", List.of("g0", "g1"), "Scale", List.of("scale")),
                Map.of("Out", List.of("g0", "g1"), "FoundInfinite", List.of("found")), Map.of());
        Executor exe = new Executor();
        Tensor g0 = TestTensors.uniform(5, 2, 3);
        Tensor g1 = TestTensors.uniform(6, 4);
        Tensor g0Before = g0.copy();
        var out = exe.run(p, new Scope(), Map.of("g0", g0, "g1", g1, "scale", Tensor.of(new float[]{4f}, 1)),
                List.of("g0", "found"));
        assertEquals(0, out.get("found").getLong(0));
        for (int i = 0; i < 6; i++) {
            assertEquals(g0Before.getFloat(i) / 4f, out.get("g0").getFloat(i), 0f, "g0 element " + i);
        }
        Tensor bad = TestTensors.uniform(6, 4);
        bad.setFloat(2, Float.NaN);
        assertEquals(1, exe.run(p, new Scope(), Map.of("g0", TestTensors.uniform(5, 2, 3), "g1", bad,
                "scale", Tensor.of(new float[]{4f}, 1)), List.of("found")).get("found").getLong(0), "nan");
        Tensor huge = TestTensors.uniform(5, 2, 3);
        huge.setFloat(0, Float.MAX_VALUE);
        assertEquals(1, exe.run(p, new Scope(), Map.of("g0", huge, "g1", TestTensors.uniform(6, 4),
                "scale", Tensor.of(new float[]{0.5f}, 1)), List.of("found")).get("found").getLong(0),
                "a finite gradient that overflows when unscaled");
    }

    @Test
    void checkFiniteAndUnscaleTakesSparseGradients() {
        Op op = new Op("check_finite_and_unscale", Map.of("X", List.of("emb@GRAD"), "Scale", List.of("scale")),
                Map.of("Out", List.of("emb@GRAD"), "FoundInfinite", List.of("found")), Map.of());
        SelectedRows sparse = new SelectedRows(Tensor.ofLongs(new long[]{4, 1}, 2), Tensor.of(new float[]{2, 4, 6, 8}, 2, 2), 10);
        Object[] frame = {sparse, Tensor.of(new float[]{2f}, 1), null};
        Kernel k = OpRegistry.get("check_finite_and_unscale").kernelFactory().create(op, ExecContext.none());
        k.run(new KernelArgs(op, frame, new String[]{"X", "Scale"}, new int[][]{{0}, {1}},
                new String[]{"Out", "FoundInfinite"}, new int[][]{{0}, {2}}));
        SelectedRows out = (SelectedRows) frame[0];
        assertEquals(List.of(1f, 2f, 3f, 4f), List.of(out.values().getFloat(0), out.values().getFloat(1),
                out.values().getFloat(2), out.values().getFloat(3)));
        assertEquals(sparse.rows(), out.rows());
        assertEquals(0, ((Tensor) frame[2]).getLong(0));
        sparse.values().setFloat(3, Float.NaN);
        frame[0] = sparse;
        k.run(new KernelArgs(op, frame, new String[]{"X", "Scale"}, new int[][]{{0}, {1}},
                new String[]{"Out", "FoundInfinite"}, new int[][]{{0}, {2}}));
        assertEquals(1, ((Tensor) frame[2]).getLong(0), "nan in a sparse gradient");
    }

    @Test
    void updateLossScalingGrowsAfterGoodStepsAndShrinksAfterBadOnes() {
        Program p = new Program();
        Block b = p.globalBlock();
        for (String v : List.of("scale", "good", "bad")) {
            b.createVar(v, v.equals("scale") ? DType.F32 : DType.I64, 1).setPersistable(true);
        }
        b.createVar("found", DType.I64, 1).setData(true);
        b.appendOp("update_loss_scaling", Map.of("FoundInfinite", List.of("found"), "PrevLossScaling", List.of("scale"),
                        "InGoodSteps", List.of("good"), "InBadSteps", List.of("bad")),
                Map.of("LossScaling", List.of("scale"), "OutGoodSteps", List.of("good"), "OutBadSteps", List.of("bad")),
                Map.of("incr_every_n_steps", 2, "decr_every_n_nan_or_inf", 2, "incr_ratio", 2.0f, "decr_ratio", 0.5f));
        Scope scope = new Scope();
        scope.put("scale", Tensor.of(new float[]{8f}, 1));
        scope.put("good", Tensor.ofLongs(new long[]{0}, 1));
        scope.put("bad", Tensor.ofLongs(new long[]{0}, 1));
        Executor exe = new Executor();
        long[] found = {0, 0, 0, 1, 0, 1, 1, 1, 1};
        float[] scale = {8, 16, 16, 16, 16, 16, 8, 8, 4};
        long[] good = {1, 0, 1, 0, 1, 0, 0, 0, 0};
        long[] bad = {0, 0, 0, 1, 0, 1, 0, 1, 0};
        for (int s = 0; s < found.length; s++) {
            exe.run(p, scope, Map.of("found", Tensor.ofLongs(new long[]{found[s]}, 1)), List.of());
            assertEquals(scale[s], scope.get("scale").getFloat(0), "scale after step " + s);
            assertEquals(good[s], scope.get("good").getLong(0), "good steps after step " + s);
            assertEquals(bad[s], scope.get("bad").getLong(0), "bad steps after step " + s);
        }
    }

    @Test
    void logicalNotOfAFlag() {
        assertEquals(1, OneOp.of("logical_not").in("X", Tensor.ofLongs(new long[]{0}, 1)).run("Out").getLong(0));
        assertEquals(0, OneOp.of("logical_not").in("X", Tensor.ofLongs(new long[]{3}, 1)).run("Out").getLong(0));
    }

    @Test
    void matmulOnBf16OperandsIsTheF32ProductOfTheRoundedOperandsRoundedToBf16() {
        Tensor x = bf16(TestTensors.uniform(7, 5, 6));
        Tensor y = bf16(TestTensors.uniform(8, 6, 4));
        Tensor out = OneOp.of("matmul").in("X", x).in("Y", y).run("Out");
        Tensor reference = OneOp.of("matmul").in("X", x.to(DType.F32)).in("Y", y.to(DType.F32)).run("Out");
        assertEquals(DType.BF16, out.dtype());
        for (int i = 0; i < 20; i++) {
            assertEquals(BFloat16.toFloat(BFloat16.fromFloat(reference.getFloat(i))), out.getFloat(i), 0f, "element " + i);
        }
        Tensor g = bf16(TestTensors.uniform(9, 5, 4));
        Map<String, Tensor> grads = OneOp.of("matmul_grad").in("X", x).in("Y", y).in("Out@GRAD", g).run();
        Map<String, Tensor> f32Grads = OneOp.of("matmul_grad").in("X", x.to(DType.F32)).in("Y", y.to(DType.F32))
                .in("Out@GRAD", g.to(DType.F32)).run();
        for (String slot : List.of("X@GRAD", "Y@GRAD")) {
            Tensor lo = grads.get(slot);
            Tensor hi = f32Grads.get(slot);
            assertEquals(DType.BF16, lo.dtype(), slot);
            for (long i = 0; i < hi.numel(); i++) {
                assertEquals(BFloat16.toFloat(BFloat16.fromFloat(hi.getFloat(i))), lo.getFloat(i), 0f, slot + " element " + i);
            }
        }
    }

    @Test
    void matmulRefusesMixedDtypes() {
        IrException e = assertThrows(IrException.class, () -> OneOp.of("matmul").in("X", bf16(TestTensors.uniform(1, 2, 2)))
                .in("Y", TestTensors.uniform(2, 2, 2)).program());
        assertTrue(e.getMessage().contains("or bfloat16 X and Y"), e.getMessage());
    }

    private static Tensor bf16(Tensor f32) {
        return f32.to(DType.BF16);
    }
}
