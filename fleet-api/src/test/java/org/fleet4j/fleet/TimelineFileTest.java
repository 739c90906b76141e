package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The timeline in one process: file names per rank, and one span per op run in program order. */
class TimelineFileTest {
    @TempDir
    Path work;

    @Test
    void theRankGoesBeforeTheExtension() {
        assertEquals(Path.of("out/trace.rank3.json"), Timeline.rankFile(Path.of("out/trace.json"), 3));
        assertEquals(Path.of("out.d/trace.rank0"), Timeline.rankFile(Path.of("out.d/trace"), 0));
        assertEquals(Path.of(".trace.rank1"), Timeline.rankFile(Path.of(".trace"), 1));
    }

    @Test
    void everyOpRunIsOneCompleteEventInProgramOrder() throws Exception {
        Program main = new Program().setRandomSeed(1);
        Program startup = new Program().setRandomSeed(1);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 4);
        Var out = nn.fc(x, 3, "relu");
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        Timeline timeline = Timeline.attach(exe, main, 5);
        for (int step = 0; step < 2; step++) {
            exe.run(main, scope, Map.of("x", Tensor.zeros(2, 4)), List.of(out.name()));
        }
        int ops = main.globalBlock().ops().size();
        assertEquals(2 * ops, timeline.size());
        Path file = work.resolve("t.json");
        timeline.write(file);

        List<String> names = new ArrayList<>();
        List<Integer> indices = new ArrayList<>();
        long lastTs = 0;
        for (JsonNode e : new ObjectMapper().readTree(file.toFile()).get("traceEvents")) {
            if (e.get("ph").asText().equals("X")) {
                assertEquals(5, e.get("pid").asInt());
                assertEquals(Thread.currentThread().threadId(), e.get("tid").asLong());
                assertTrue(e.get("ts").asLong() >= lastTs, "spans are recorded in the order they ran");
                lastTs = e.get("ts").asLong();
                names.add(e.get("name").asText());
                indices.add(e.get("args").get("index").asInt());
            }
        }
        for (int i = 0; i < 2 * ops; i++) {
            assertEquals(i % ops, indices.get(i));
            assertEquals(main.globalBlock().ops().get(i % ops).type(), names.get(i));
        }
    }
}
