package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.models.Mlp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mnist --timeline} on two real ranks: each rank writes a Chrome trace with every op type and its allreduces. */
class TimelineIT {
    @TempDir
    Path work;

    @Test
    void twoRanksEachWriteAChromeTraceWithEveryOpTypeAndTheAllreduceBytes() throws Exception {
        Path trace = work.resolve("trace.json");
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, "mnist", "--steps", "3", "--global_batch", "64",
                "--optimizer", "sgd", "--timeline", trace.toString());
        assertEquals(0, job.await(Duration.ofMinutes(3)), job.describe());

        // the op types of the single-process training program; two ranks add the gradient allreduce
        Mlp net = Mlp.build(new int[]{784, 512, 512, 10}, 1);
        Training.optimizer("sgd", 0.05).minimize(net.loss());
        Set<String> programTypes = new TreeSet<>(net.main().globalBlock().ops().stream().map(Op::type).toList());
        programTypes.add("c_allreduce");
        for (int rank = 0; rank < 2; rank++) {
            Path file = work.resolve("trace.rank" + rank + ".json");
            assertTrue(Files.exists(file), "rank " + rank + " wrote no " + file + "\n" + job.describe());
            JsonNode events = new ObjectMapper().readTree(file.toFile()).get("traceEvents");
            Set<String> seen = new TreeSet<>();
            long allreduceBytes = 0;
            int allreduces = 0;
            for (JsonNode e : events) {
                if (!e.get("ph").asText().equals("X")) {
                    continue;
                }
                assertEquals(rank, e.get("pid").asInt(), e.toString());
                assertTrue(e.get("dur").asLong() >= 0 && e.get("ts").asLong() > 0 && e.has("tid"), e.toString());
                assertTrue(e.get("args").has("index"), e.toString());
                seen.add(e.get("name").asText());
                if (e.get("name").asText().equals("c_allreduce")) {
                    allreduces++;
                    allreduceBytes += e.get("args").get("bytes").asLong();
                }
            }
            assertTrue(seen.containsAll(programTypes), "rank " + rank + " traced " + seen + ", the program has " + programTypes);
            // 3 steps reduce every f32 parameter's gradient once per step
            long paramBytes = 4L * (784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
            assertEquals(3 * paramBytes, allreduceBytes, "rank " + rank + ": bytes over " + allreduces + " allreduces");
        }
    }
}
