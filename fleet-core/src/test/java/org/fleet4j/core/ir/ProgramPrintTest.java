package org.fleet4j.core.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

/** A printed program shows every var with its type and role, and every op with its slots and attributes. */
class ProgramPrintTest {

    private static Program smallProgram(Layers[] out) {
        Program main = new Program().setRandomSeed(3);
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        nn.mean(nn.fc(x, 2, "relu"));
        out[0] = nn;
        return main;
    }

    @Test
    void aSmallProgramPrintsReadably() {
        Program main = smallProgram(new Layers[1]);
        assertEquals("""
                program (seed 3, 7 vars, 4 ops)
                vars:
                  x : float32[-1, 4] data
                  fc_0.w_0 : float32[4, 2] param
                  fc_0.b_0 : float32[2] param
                  matmul_0 : float32[-1, 2]
                  elementwise_add_0 : float32[-1, 2]
                  relu_0 : float32[-1, 2]
                  mean_0 : float32[]
                ops:
                  #0   matmul(X=[x], Y=[fc_0.w_0]) -> (Out=[matmul_0]) {transpose_X=false, transpose_Y=false, alpha=1.0}
                  #1   elementwise_add(X=[matmul_0], Y=[fc_0.b_0]) -> (Out=[elementwise_add_0]) {axis=-1}
                  #2   relu(X=[elementwise_add_0]) -> (Out=[relu_0])
                  #3   mean(X=[relu_0]) -> (Out=[mean_0])
                """, main.toString());
    }

    @Test
    void backwardAndUpdatesPrintAsOps() {
        Layers[] nn = new Layers[1];
        Program main = smallProgram(nn);
        new SGD(0.1).minimize(main.globalBlock().var("mean_0"));
        String text = main.toString();
        assertTrue(text.contains("#4   fill_constant() -> (Out=[mean_0@GRAD]) {shape=[], dtype=\"float32\", value=1.0}"), text);
        assertTrue(text.contains("#5   mean_grad(X=[relu_0], Out=[mean_0], Out@GRAD=[mean_0@GRAD]) -> (X@GRAD=[relu_0@GRAD])"),
                text);
        assertTrue(text.contains("matmul_grad(X=[x], Y=[fc_0.w_0], Out=[matmul_0], Out@GRAD=[matmul_0@GRAD]) -> "
                + "(Y@GRAD=[fc_0.w_0@GRAD]) {transpose_X=false, transpose_Y=false, alpha=1.0}"), text);
        assertTrue(text.contains("sgd(Param=[fc_0.w_0], Grad=[fc_0.w_0@GRAD], LearningRate=[learning_rate_0]) -> "
                + "(ParamOut=[fc_0.w_0]) {weight_decay=0.0}"), text);
        assertTrue(text.contains("  @LR_STEP@ : int64[1] persistable"), text);
        assertTrue(text.contains("  fc_0.w_0@GRAD : float32[4, 2]\n"), text);
    }
}
