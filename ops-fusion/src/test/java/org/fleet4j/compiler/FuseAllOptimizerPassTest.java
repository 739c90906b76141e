package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.ops.LrSchedule;
import org.fleet4j.core.ops.fused.FusedOptimizerOps;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.optim.AdamW;
import org.fleet4j.core.optim.Momentum;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FuseAllOptimizerPassTest {
    private final Pass pass = new FuseAllOptimizerPass();

    static Stream<Arguments> optimizers() {
        return Stream.of(
                Arguments.of("sgd", FusedOptimizerOps.SGD, (Function<Program, Optimizer>) p -> new SGD(LrSchedule.constant(0.2), 0.01f)),
                Arguments.of("momentum", FusedOptimizerOps.MOMENTUM, (Function<Program, Optimizer>) p -> new Momentum(0.1, 0.9f)),
                Arguments.of("momentum", FusedOptimizerOps.MOMENTUM,
                        (Function<Program, Optimizer>) p -> new Momentum(LrSchedule.constant(0.1), 0.9f, true, 0.001f)),
                Arguments.of("adam", FusedOptimizerOps.ADAM, (Function<Program, Optimizer>) p -> new Adam(0.01)),
                Arguments.of("adamw", FusedOptimizerOps.ADAM, (Function<Program, Optimizer>) p -> new AdamW(0.01, 0.05f)));
    }

    @ParameterizedTest
    @MethodSource("optimizers")
    void oneFusedOpTrainsExactlyAsOneOpPerParameter(String type, String fusedType, Function<Program, Optimizer> opt) {
        Nets.Net net = Nets.mlp("relu", new int[]{16, 12}, opt);
        assertEquals(6, Nets.count(net.main(), type));
        PassResult r = pass.apply(net.main());
        Program fused = r.program();
        assertEquals(0, Nets.count(fused, type));
        assertEquals(1, Nets.count(fused, fusedType));
        assertEquals(6, fused.globalBlock().ops().stream().filter(o -> o.type().equals(fusedType)).findFirst()
                .orElseThrow().input("Param").size());
        assertTrue(r.notes().getFirst().startsWith("fused 6 " + type + " ops into " + fusedType), r.notes().toString());
        Same.runs(Nets.train(net.main(), net.startup(), net.loss(), 10),
                Nets.train(fused, net.startup(), net.loss(), 10), 1e-6f);
    }

    @Test
    void parametersAndMomentsEndUpInOneContiguousBuffer() {
        Nets.Net net = Nets.mlp("relu", new int[]{16}, p -> new Momentum(0.1, 0.9f));
        Program fused = pass.apply(net.main()).program();
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(net.startup(), scope);
        for (int s = 0; s < 2; s++) {
            exe.run(fused, scope, Nets.batch(s), List.of(net.loss()));
        }
        List<String> params = fused.globalBlock().ops().stream().filter(o -> o.type().equals(FusedOptimizerOps.MOMENTUM))
                .findFirst().orElseThrow().input("Param");
        assertContiguous(scope, params);
        assertContiguous(scope, params.stream().map(p -> p + "_velocity_0").toList());
    }

    private static void assertContiguous(Scope scope, List<String> names) {
        long next = scope.get(names.getFirst()).segment().address();
        for (String n : names) {
            Tensor t = scope.get(n);
            assertEquals(next, t.segment().address(), n + " should follow the previous var in one buffer");
            next += t.byteSize();
        }
    }

    @Test
    void aParameterReplacedInTheScopeIsTakenUpAgain() {
        Nets.Net net = Nets.mlp("relu", new int[]{16}, p -> new SGD(0.1));
        Program fused = pass.apply(net.main()).program();
        float[][] results = new float[2][];
        Program[] programs = {net.main(), fused};
        for (int k = 0; k < 2; k++) {
            Executor exe = new Executor();
            Scope scope = new Scope();
            exe.run(net.startup(), scope);
            exe.run(programs[k], scope, Nets.batch(0), List.of(net.loss()));
            // as a checkpoint load would: a new tensor, new values
            Tensor w = scope.get("fc_0.w_0").copy();
            w.fill(0.05);
            scope.put("fc_0.w_0", w);
            exe.run(programs[k], scope, Nets.batch(1), List.of(net.loss()));
            results[k] = scope.get("fc_0.w_0").toFloatArray();
        }
        for (int i = 0; i < results[0].length; i++) {
            assertEquals(results[0][i], results[1][i], 1e-7f, "fc_0.w_0[" + i + "]");
        }
    }

    @Test
    void sparseGradientsStayWithTheirOwnOp() {
        Program main = new Program().setRandomSeed(5);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var ids = nn.data("ids", DType.I64, -1, 1);
        Var emb = nn.embedding(ids, 20, 4, true);
        Var h = nn.fc(emb, 3, "relu");
        new SGD(0.1).minimize(nn.mean(h));
        PassResult r = pass.apply(main);
        assertEquals(1, Nets.count(r.program(), "sgd"), "the embedding's sparse update");
        assertEquals(1, Nets.count(r.program(), FusedOptimizerOps.SGD));
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("its gradient is sparse")), r.notes().toString());
    }

    @Test
    void aLoneUpdateIsLeftAlone() {
        Program main = new Program().setRandomSeed(5);
        Program startup = new Program();
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 4);
        Var w = nn.createParameter("w", DType.F32, new long[]{4, 1}, org.fleet4j.core.layers.Initializer.constant(0.5f));
        new SGD(0.1).minimize(nn.mean(nn.matmul(x, w)));
        PassResult r = pass.apply(main);
        assertEquals(main, r.program());
        assertTrue(r.notes().getFirst().startsWith("nothing fused"), r.notes().toString());
    }
}
