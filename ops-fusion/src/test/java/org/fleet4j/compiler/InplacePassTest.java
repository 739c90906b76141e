package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

class InplacePassTest {
    private final Pass pass = new InplacePass();

    @Test
    void anInferenceChainWritesEachOutputOverItsDeadInput() {
        Program main = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, new Program());
        Var out = nn.fc(nn.data("x", DType.F32, -1, 8), 4, "relu");
        PassResult r = pass.apply(main);
        List<Op> ops = r.program().globalBlock().ops();
        assertEquals(List.of("matmul", "elementwise_add", "relu"), Nets.opTypes(r.program()));
        assertEquals(out.name(), ops.get(0).out("Out"), "matmul writes straight into the final buffer");
        assertEquals(out.name(), ops.get(1).in("X"));
        assertEquals(out.name(), ops.get(1).out("Out"));
        assertEquals(out.name(), ops.get(2).in("X"));
        assertEquals(main.globalBlock().vars().size() - 2, r.program().globalBlock().vars().size());
        assertTrue(r.notes().getFirst().startsWith("2 output(s) now share their input's buffer"), r.notes().toString());
    }

    @Test
    void trainingIsUnchangedAndHoldsLessWorkingMemory() {
        Nets.Net net = Nets.mlp("sigmoid", new int[]{64, 64}, p -> new SGD(0.2));
        PassResult r = pass.apply(net.main());
        Program reused = r.program();
        assertEquals(2, Nets.count(reused, "sigmoid_grad"));
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("sigmoid_grad writes")), r.notes().toString());
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 6), Nets.train(reused, net.startup(), net.loss(), 6), 1e-6f);

        long[] held = new long[2];
        Program[] programs = {net.main(), reused};
        for (int k = 0; k < 2; k++) {
            Executor exe = new Executor();
            Scope scope = new Scope();
            exe.run(net.startup(), scope);
            exe.run(programs[k], scope, Nets.batch(0), List.of());
            held[k] = exe.temporaryBytes(programs[k]);
        }
        // two hidden-layer gradients of 16 x 64 floats no longer have buffers of their own
        assertEquals(2 * 16 * 64 * 4, held[0] - held[1], "bytes held: " + held[0] + " without, " + held[1] + " with");
    }

    @Test
    void aTemporaryReadByBackwardKeepsItsBuffer() {
        Nets.Net net = Nets.mlp("relu", new int[]{8}, p -> new SGD(0.1));
        Program reused = pass.apply(net.main()).program();
        Op relu = reused.globalBlock().ops().stream().filter(o -> o.type().equals("relu")).findFirst().orElseThrow();
        assertFalse(relu.in("X").equals(relu.out("Out")), "relu_grad still reads relu's input: " + relu);
    }
}
