package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.fleet4j.strategy.report.StrategyCli;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fleetrun --dry_run}'s strategy part: what it prints and its exit status. */
class StrategyCliTest {
    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {
    }

    private static Run dryRun(Path file, int nnodes, int nproc, String device, String format) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = StrategyCli.dryRun(file, nnodes, nproc, device, format,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void tablePrintsTheWorldAndEveryFieldWithItsSource() throws Exception {
        Path strategy = file("s.yaml", "nccl_comm_num: 2\nbuild_strategy:\n  fuse_relu_depthwise_conv: true\ncudnn_exhaustive_search: false\n");
        Run run = dryRun(strategy, 1, 2, "cpu", "table");
        assertEquals(0, run.status, run.err);
        assertEquals("", run.err);
        assertTrue(run.out.startsWith("world: 1 node x 2 ranks per node = 2 ranks on cpu\n"), run.out);
        assertRow(run.out, "mode", "collective", "default", "");
        // whether it is also "not in effect yet" depends on the knob readers on the class path: none in this module
        assertRow(run.out, "nccl_comm_num", "2", "file:1", "(?:not in effect yet; )?advice");
        assertRow(run.out, "build_strategy.fuse_relu_depthwise_conv", "true", "file:3", "not in effect yet");
        assertRow(run.out, "execution_strategy.num_threads", "1", "default", "");
        assertRow(run.out, "cudnn_exhaustive_search", "false", "file:4", "ignored on cpu");
        assertFalse(run.out.contains("num_threads: 1 ->"), "the NCCL thread rule is for gpu only:\n" + run.out);
        assertTrue(run.out.contains("\n  nccl_comm_num = 2: advice: with sync_nccl_allreduce on"), run.out);
        for (Field<?> field : StrategySchema.fields()) {
            assertTrue(run.out.lines().anyMatch(l -> l.startsWith(field.key() + " ")), "a row for " + field.key());
        }
    }

    private static void assertRow(String table, String key, String value, String source, String notePattern) {
        Pattern row = Pattern.compile("(?m)^" + Pattern.quote(key) + " +" + Pattern.quote(value) + " +" + Pattern.quote(source)
                + (notePattern.isEmpty() ? "$" : " +" + notePattern + "$"));
        assertTrue(row.matcher(table).find(), "row " + key + " | " + value + " | " + source + " | " + notePattern + " in\n" + table);
    }

    @Test
    void jsonIsOneObjectWithDottedKeysAndTheChanges() throws Exception {
        Path strategy = file("s.prototxt", "nccl_comm_num: 4\ngradient_merge: true\ngradient_merge_configs { k_steps: 8 }\n");
        Run run = dryRun(strategy, 1, 1, "gpu", "json");
        assertEquals(0, run.status, run.err);
        JsonNode root = new ObjectMapper().readTree(run.out);
        JsonNode effective = root.get("effective");
        assertEquals(StrategySchema.fields().size(), effective.size());
        assertEquals(1, effective.get("nccl_comm_num").intValue());
        assertTrue(effective.get("gradient_merge").booleanValue());
        assertEquals(8, effective.get("gradient_merge_configs.k_steps").intValue());
        assertFalse(effective.get("build_strategy.fuse_bn_act_ops").booleanValue());
        assertEquals(1, effective.get("execution_strategy.num_threads").intValue());
        assertEquals(32768.0, effective.get("amp_configs.init_loss_scaling").doubleValue());
        assertTrue(effective.get("amp_configs.custom_white_list").isArray());
        assertEquals("collective", effective.get("mode").textValue());

        List<String> changes = new ArrayList<>();
        root.get("changes").forEach(c -> changes.add(c.get("key").textValue() + ":" + c.get("from") + "->" + c.get("to")));
        assertEquals(List.of("nccl_comm_num:4->1", "fuse_all_reduce_ops:true->false"), changes);
        assertTrue(root.get("changes").get(0).get("reason").textValue().startsWith("a single worker"));
        assertEquals(1, root.get("world").get("world_size").intValue());
        assertEquals("gpu", root.get("world").get("device").textValue());
        assertEquals(List.of("nodes", "ranks_per_node", "world_size", "device"), iterable(root.get("world").fieldNames()));
        assertEquals(List.of("world", "effective", "changes", "warnings"), iterable(root.fieldNames()));
        assertTrue(root.get("warnings").isArray());
    }

    private static List<String> iterable(java.util.Iterator<String> names) {
        List<String> out = new ArrayList<>();
        names.forEachRemaining(out::add);
        return out;
    }

    @Test
    void noFileMeansAllDefaults() throws Exception {
        Run run = dryRun(null, 2, 4, "gpu", "json");
        assertEquals(0, run.status, run.err);
        JsonNode root = new ObjectMapper().readTree(run.out);
        assertEquals(32, root.get("effective").get("fuse_grad_size_in_MB").intValue());
        assertEquals(2, root.get("effective").get("execution_strategy.num_threads").intValue());
        assertEquals(0, root.get("warnings").size());
    }

    @Test
    void badFilePrintsEveryProblemOnItsOwnLineAndReturnsTwo() throws Exception {
        Path strategy = file("bad.yaml", "fuse_grad_size_in_mb: 16\nnccl_comm_num: 0\n");
        Run run = dryRun(strategy, 1, 2, "cpu", "table");
        assertEquals(2, run.status);
        assertEquals("", run.out);
        assertEquals("error: " + strategy + ":1: unknown key 'fuse_grad_size_in_mb'; did you mean fuse_grad_size_in_MB?\n"
                + "error: " + strategy + ":2: nccl_comm_num: 0 is out of range: must be at least 1\n", run.err);
    }

    @Test
    void contradictionsWithTheWorldReturnTwo() throws Exception {
        Path strategy = file("h.json", "{\"use_hierarchical_allreduce\": true, \"hierarchical_allreduce_inter_nranks\": 3}");
        Run run = dryRun(strategy, 2, 4, "gpu", "json");
        assertEquals(2, run.status);
        assertEquals("", run.out);
        assertTrue(run.err.startsWith("error: " + strategy + ":1: hierarchical_allreduce_inter_nranks: 3 does not divide"), run.err);
        assertEquals(1, run.err.lines().count());
    }

    @Test
    void badArgumentsReturnTwoWithoutAStackTrace() {
        assertEquals(new Run(2, "", "error: --format: 'xml' is not allowed; allowed: table, json\n"), dryRun(null, 1, 1, "cpu", "xml"));
        assertEquals(new Run(2, "", "error: device: 'tpu' is not allowed; allowed: cpu, gpu\n"), dryRun(null, 1, 1, "tpu", "table"));
        assertEquals(new Run(2, "", "error: nnodes: 0 is out of range: must be at least 1\n"), dryRun(null, 0, 1, "cpu", "table"));
        Path missing = dir.resolve("none.yaml");
        assertEquals(new Run(2, "", "error: " + missing + ": no such strategy file\n"), dryRun(missing, 1, 1, "cpu", "table"));
    }
}
