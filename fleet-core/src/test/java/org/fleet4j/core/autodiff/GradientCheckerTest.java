package org.fleet4j.core.autodiff;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The checker itself: it passes a right gradient and catches wrong ones, naming the op, slot and element. */
class GradientCheckerTest {

    /** out = x^2 with a gradient kernel that is right except at one element (index 4), where it is doubled. */
    @BeforeAll
    static void registerTestOps() {
        OpRegistry.register(OpSpec.builder("test_square_bad_at_4")
                .in("X").out("Out")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.outLike("Out", x);
                    for (long i = 0; i < x.numel(); i++) {
                        out.setFloat(i, x.getFloat(i) * x.getFloat(i));
                    }
                })
                .gradKernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor g = a.in("Out@GRAD");
                    Tensor gx = a.outLike("X@GRAD", x);
                    for (long i = 0; i < x.numel(); i++) {
                        gx.setFloat(i, (i == 4 ? 4 : 2) * x.getFloat(i) * g.getFloat(i));
                    }
                })
                .build());
        // a gradient that ignores Out@GRAD's sign and magnitude: caught only because the loss weights vary
        OpRegistry.register(OpSpec.builder("test_identity_ignores_out_grad")
                .in("X").out("Out")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> a -> a.outLike("Out", a.in("X")).copyFrom(a.in("X")))
                .gradKernel(op -> a -> a.outLike("X@GRAD", a.in("X")).fill(1.0))
                .build());
    }

    private static final Tensor X = Tensor.of(new float[]{0.3f, -0.7f, 1.1f, 0.25f, -0.9f, 0.6f}, 2, 3);

    @Test
    void aWrongElementIsFoundAndNamed() {
        var e = assertThrows(GradientChecker.GradientMismatchException.class,
                () -> GradientChecker.forOp("test_square_bad_at_4").input("X", X).check());
        GradientChecker.InputError worst = e.result().worst();
        assertEquals("X", worst.slot());
        assertArrayEquals(new long[]{1, 1}, worst.element(), "flat index 4 of [2, 3]");
        assertEquals(2.0 * worst.numeric(), worst.analytic(), 1e-3);
        assertTrue(e.getMessage().contains("gradient check of test_square_bad_at_4 FAILED"), e.getMessage());
        assertTrue(e.getMessage().contains("X[0] at [1, 1]"), e.getMessage());
    }

    @Test
    void aGradientThatIgnoresTheIncomingGradientFails() {
        GradientChecker.Result r = GradientChecker.forOp("test_identity_ignores_out_grad").input("X", X).run();
        assertFalse(r.passed(), r.toString());
    }

    @Test
    void theRightGradientOfTheSameFunctionPasses() {
        GradientChecker.Result r = GradientChecker.forOp("elementwise_mul").input("X", X).input("Y", X.copy()).check();
        assertTrue(r.worst().error() < 1e-3, r.toString());
        assertEquals(2, r.inputs().size());
    }

    @Test
    void skippedAndIntegerInputsAreNotChecked() {
        GradientChecker.Result r = GradientChecker.forOp("elementwise_add").input("X", X).input("Y", X.copy())
                .skip("Y").check();
        assertEquals(1, r.inputs().size());
        assertEquals("X", r.inputs().get(0).slot());
        var e = assertThrows(IllegalArgumentException.class,
                () -> GradientChecker.forOp("mean").input("X", X).skip("X").run());
        assertTrue(e.getMessage().contains("no floating-point input to check"), e.getMessage());
    }

    @Test
    void unknownSlotsAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> GradientChecker.forOp("matmul").input("Z", X));
        assertTrue(e.getMessage().contains("op matmul has no input slot 'Z' (inputs: [X, Y])"), e.getMessage());
        var e2 = assertThrows(IllegalArgumentException.class, () -> GradientChecker.forOp("matmul").lossFrom("Loss"));
        assertTrue(e2.getMessage().contains("no output slot 'Loss'"), e2.getMessage());
    }

    @Test
    void anOpWithoutGradientIsReported() {
        var e = assertThrows(RuntimeException.class, () -> GradientChecker.forOp("increment").input("X", X).run());
        assertTrue(e.getMessage().contains("increment has no gradient"), e.getMessage());
    }
}
