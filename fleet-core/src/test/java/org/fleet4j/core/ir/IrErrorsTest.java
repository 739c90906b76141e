package org.fleet4j.core.ir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** A malformed program fails while it is built, with a message that names the op, the var or attribute, and why. */
class IrErrorsTest {

    private final Program p = new Program();
    private final Block b = p.globalBlock();

    IrErrorsTest() {
        b.createVar("x", DType.F32, -1, 4).setData(true);
        b.createVar("fc_0.w_0", DType.F32, 5, 3).setParameter(true);
        b.createVar("ids", DType.I64, -1, 1).setData(true);
    }

    private static String message(Executable e) {
        return assertThrows(IrException.class, e).getMessage();
    }

    private static void assertContains(String expected, String actual) {
        assertTrue(actual.contains(expected), "expected \"" + expected + "\" in: " + actual);
    }

    private Op append(String type, Map<String, List<String>> in, Map<String, Object> attrs) {
        return b.appendOp(type, in, Map.of("Out", List.of("out")), attrs);
    }

    @Test
    void unknownOpType() {
        String m = message(() -> append("matmull", Map.of("X", List.of("x")), Map.of()));
        assertContains("unknown op type 'matmull' (known: [", m);
        assertContains("matmul, ", m);
    }

    @Test
    void unknownAttributeListsTheOpsAttributes() {
        String m = message(() -> append("matmul", Map.of("X", List.of("x"), "Y", List.of("fc_0.w_0")),
                Map.of("transpose_x", true)));
        assertEquals("op #0 matmul has no attribute 'transpose_x' (attributes: [transpose_X, transpose_Y, alpha])", m);
        assertContains("op #0 relu has no attribute 'alpha' (it takes none)",
                message(() -> append("relu", Map.of("X", List.of("x")), Map.of("alpha", 1f))));
    }

    @Test
    void wrongAttributeType() {
        assertEquals("op #0 matmul: attribute 'transpose_X': expected bool, got String \"yes\"",
                message(() -> append("matmul", Map.of("X", List.of("x"), "Y", List.of("fc_0.w_0")),
                        Map.of("transpose_X", "yes"))));
        assertEquals("op #0 reshape: attribute 'shape': expected longs, got Float 2.0",
                message(() -> append("reshape", Map.of("X", List.of("x")), Map.of("shape", 2f))));
        assertContains("op #0 reshape needs attribute 'shape' (longs)",
                message(() -> append("reshape", Map.of("X", List.of("x")), Map.of())));
    }

    @Test
    void shapeMismatchNamesTheOpInputsAndShapes() {
        assertEquals("op #0 matmul(X=x float32[-1, 4], Y=fc_0.w_0 float32[5, 3]): inner dimensions differ: 4 (X) vs 5 (Y);"
                + " transpose one operand or fix its shape",
                message(() -> append("matmul", Map.of("X", List.of("x"), "Y", List.of("fc_0.w_0")), Map.of())));
        assertEquals("op #0 elementwise_add(X=x float32[-1, 4], Y=fc_0.w_0 float32[5, 3]): shapes [-1, 4] and [5, 3]"
                        + " do not broadcast",
                message(() -> append("elementwise_add", Map.of("X", List.of("x"), "Y", List.of("fc_0.w_0")), Map.of())));
    }

    @Test
    void shapeErrorsOfTheNewOps() {
        assertContains("op #0 concat(X=x float32[-1, 4], X=fc_0.w_0 float32[5, 3]): X[1] [5, 3] differs from X[0]"
                        + " [-1, 4] in dimension 1 (only axis 0 may differ)",
                message(() -> append("concat", Map.of("X", List.of("x", "fc_0.w_0")), Map.of())));
        assertContains("axis 2 is outside [-2, 2) for rank 2",
                message(() -> append("concat", Map.of("X", List.of("x", "x")), Map.of("axis", 2))));
        assertContains("op #0 reshape(X=x float32[-1, 4]): cannot reshape [-1, 4] to [0, 3]: the known dimensions hold"
                + " 4 vs 3 elements", message(() -> append("reshape", Map.of("X", List.of("x")),
                Map.of("shape", new long[]{0, 3}))));
        assertContains("shape [-1, -1] has more than one -1", message(() -> append("reshape", Map.of("X", List.of("x")),
                Map.of("shape", new long[]{-1, -1}))));
        assertContains("op #0 lookup_table(W=fc_0.w_0 float32[5, 3], Ids=x float32[-1, 4]): Ids must be int64 or int32",
                message(() -> append("lookup_table", Map.of("W", List.of("fc_0.w_0"), "Ids", List.of("x")), Map.of())));
        assertContains("padding_idx 7 is not -1 (none) or a row of W [0, 5)", message(() -> append("lookup_table",
                Map.of("W", List.of("fc_0.w_0"), "Ids", List.of("ids")), Map.of("padding_idx", 7L))));
        assertContains("dropout_prob must be in [0, 1], is 1.5", message(() -> b.appendOp("dropout",
                Map.of("X", List.of("x")), Map.of("Out", List.of("o"), "Mask", List.of("m")), Map.of("dropout_prob", 1.5f))));
        b.createVar("c3", DType.F32, 3);
        assertContains("Scale must be [4] (one value per channel of X), is [3]", message(() -> b.appendOp("batch_norm",
                Map.of("X", List.of("x"), "Scale", List.of("c3"), "Bias", List.of("c3"), "Mean", List.of("c3"),
                        "Variance", List.of("c3")),
                Map.of("Y", List.of("y"), "MeanOut", List.of("c3"), "VarianceOut", List.of("c3"),
                        "SavedMean", List.of("sm"), "SavedVariance", List.of("sv")), Map.of())));
    }

    @Test
    void inferredShapesWithAnUnknownBatch() {
        Layers nn = new Layers(p, new Program());
        Var x = nn.data("img", DType.F32, -1, 2, 3, 4);
        assertArrayEquals(new long[]{-1, 24}, nn.reshape(x, 0, -1).shape());
        assertArrayEquals(new long[]{-1, 2, 12}, nn.reshape(x, 0, 2, -1).shape());
        assertArrayEquals(new long[]{-1, 4}, nn.reshape(x, -1, 4).shape(), "batch not copied: the -1 stays unknown");
        assertArrayEquals(new long[]{-1, 4, 7}, nn.concat(List.of(nn.reshape(x, 0, 4, 6), nn.reshape(x, -1, 4, 1)), -1)
                .shape());
        Var ids = nn.data("tokens", DType.I32, -1);
        assertArrayEquals(new long[]{-1, 8}, nn.embedding(ids, 100, 8, false).shape());
        assertArrayEquals(new long[]{-1, 2, 3, 4}, nn.batchNorm(x, false).shape());
    }

    @Test
    void missingVarSuggestsTheClosestName() {
        assertEquals("no var named 'fc_0.w_O' in the program (did you mean 'fc_0.w_0'?)",
                message(() -> append("relu", Map.of("X", List.of("fc_0.w_O")), Map.of())));
        assertEquals("no var named 'completely_different' in the program",
                message(() -> append("relu", Map.of("X", List.of("completely_different")), Map.of())));
    }

    @Test
    void slotErrors() {
        assertEquals("op #0 relu has no input slot 'Input' (inputs: [X])",
                message(() -> append("relu", Map.of("Input", List.of("x")), Map.of())));
        assertEquals("op #0 matmul needs input 'Y'", message(() -> append("matmul", Map.of("X", List.of("x")), Map.of())));
        assertEquals("op #0 relu: input slot 'X' takes one var, got [x, x]",
                message(() -> append("relu", Map.of("X", List.of("x", "x")), Map.of())));
    }
}
