package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.device.CpuProgramRunner;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.LoadReport;
import org.fleet4j.core.io.ModelState;
import org.fleet4j.core.io.ParameterLoadOptions;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The path: a data-parallel Adam training that starts from a weights-only file, which loadCheckpoint refuses. */
class LoadParametersTest {
    @TempDir
    Path work;

    @Test
    void aWeightsOnlyFileStartsATrainingThatLoadCheckpointRefuses() throws Exception {
        try (Fleet fleet = Fleet.init(Role::single, new DistributedStrategy(),
                GroupOptions.defaults().withTimeout(Duration.ofSeconds(5)),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
            Layers nn = new Layers(new Program().setRandomSeed(3), new Program().setRandomSeed(3));
            Var x = nn.data("x", DType.F32, -1, 4);
            Var logits = nn.fc(nn.fc(x, 6, "relu"), 3, null);
            fleet.distributedOptimizer(new Adam(0.05)).minimize(nn.mean(logits));
            Program main = nn.main();

            Map<String, Tensor> weights = new LinkedHashMap<>();
            for (String name : ModelState.names(main)) {
                Var v = main.globalBlock().var(name);
                Tensor t = Tensor.zeros(DType.F64, v.shape());
                for (int i = 0; i < t.numel(); i++) {
                    t.setDouble(i, 0.01 * (i + 1));
                }
                weights.put(name, t);
            }
            assertEquals(List.of("fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"), List.copyOf(weights.keySet()));
            Path file = work.resolve("weights.safetensors");
            SafeTensors.write(file, weights, Map.of());

            Scope scope = new Scope();
            try (ProgramRunner runner = new CpuProgramRunner(new Executor())) {
                runner.run(nn.startup(), scope);
                CheckpointException refused = assertThrows(CheckpointException.class,
                        () -> fleet.loadCheckpoint(file, scope, main));
                assertTrue(refused.getMessage().contains("is missing"), refused.getMessage());

                LoadReport r = fleet.loadParameters(file, scope, main, runner, ParameterLoadOptions.STRICT);
                assertEquals(List.copyOf(weights.keySet()), r.loaded());
                weights.forEach((name, t) -> assertArrayEquals(t.to(DType.F32).toFloatArray(),
                        scope.find(name).toFloatArray(), name));
                Map<String, Tensor> out = runner.run(main, scope, Map.of("x", Tensor.of(new float[]{1, 1, 1, 1}, 1, 4)),
                        List.of(logits.name()));
                assertEquals(3, out.get(logits.name()).numel());
            }
        }
    }
}
