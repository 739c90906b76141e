package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.Bytes;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** An op output beyond the off-heap limit fails naming the op and its output var, in both executors. */
class OffHeapLimitTest {
    private static final int WIDTH = 4096;

    @Test
    void anOutputTooLargeForTheLimitNamesTheOpAndTheVar() {
        for (ExecutorOptions options : List.of(ExecutorOptions.defaults(), ExecutorOptions.defaults().withNumThreads(2))) {
            Program main = new Program().setRandomSeed(1);
            Program startup = new Program();
            Layers nn = new Layers(main, startup);
            Var x = nn.data("x", DType.F32, -1, 1);
            Var h = nn.fc(x, WIDTH, null);
            // a small input whose [rows, WIDTH] product is more than the limit allows
            long rows = OffHeapMemory.limit() / 4 / WIDTH + 1;
            try (Executor exe = new Executor(options)) {
                Scope scope = new Scope();
                exe.run(startup, scope);
                Map<String, Tensor> feed = Map.of("x", Tensor.zeros(rows, 1));
                OffHeapMemoryException e = assertThrows(OffHeapMemoryException.class,
                        () -> exe.run(main, scope, feed, List.of(h.name())));
                String matmul = main.globalBlock().ops().getFirst().output("Out").getFirst();
                long bytes = rows * WIDTH * 4;
                assertTrue(e.getMessage().startsWith("op #0 matmul, output '" + matmul + "': cannot allocate "
                        + Bytes.format(bytes) + " (" + bytes + " bytes) for a tensor float32[" + rows + ", " + WIDTH + "]"),
                        options + ": " + e.getMessage());
            }
        }
    }
}
