package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.schema.StrategyException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every kind of bad input, and the exact message the user gets for it. */
class ValidationTest {
    @TempDir
    Path dir;

    private static List<String> problems(StrategyFormat format, String text) {
        String source = "s." + format.extensions().getFirst().substring(1);
        return assertThrows(StrategyException.class, () -> DistributedStrategy.parse(text, format, source)).problems();
    }

    private static String problem(StrategyFormat format, String text) {
        List<String> problems = problems(format, text);
        assertEquals(1, problems.size(), problems.toString());
        return problems.getFirst();
    }

    private static String yaml(String text) {
        return problem(StrategyFormat.YAML, text);
    }

    // ---- unknown keys

    @Test
    void unknownKeyNamesTheNearestValidKey() {
        assertEquals("s.yaml:2: unknown key 'fuse_grad_size_in_mb'; did you mean fuse_grad_size_in_MB?",
                yaml("nccl_comm_num: 2\nfuse_grad_size_in_mb: 16\n"));
        assertEquals("s.json:3: unknown key 'fuse_grad_size_in_mb'; did you mean fuse_grad_size_in_MB?",
                problem(StrategyFormat.JSON, "{\n  \"amp\": true,\n  \"fuse_grad_size_in_mb\": 16\n}"));
        assertEquals("s.prototxt:3: unknown key 'fuse_grad_size_in_mb'; did you mean fuse_grad_size_in_MB?",
                problem(StrategyFormat.PROTOTXT, "# comment\namp: true\nfuse_grad_size_in_mb: 16\n"));
    }

    @Test
    void unknownNestedKeyIsNamedWithItsGroup() {
        assertEquals("s.yaml:3: unknown key 'amp_configs.incr_ratoi'; did you mean amp_configs.incr_ratio?",
                yaml("amp: true\namp_configs:\n  incr_ratoi: 2.0\n"));
        assertEquals("s.prototxt:2: unknown key 'amp_configs.incr_ratoi'; did you mean amp_configs.incr_ratio?",
                problem(StrategyFormat.PROTOTXT, "amp_configs {\n  incr_ratoi: 2.0\n}\n"));
    }

    @Test
    void unknownGroupIsReportedOnceNotForEachOfItsKeys() {
        assertEquals("s.yaml:1: unknown key 'amp_config'; did you mean amp_configs?",
                yaml("amp_config:\n  init_loss_scaling: 8.0\n  incr_ratio: 3.0\n"));
    }

    @Test
    void keyOutsideItsGroupPointsAtTheGroupsThatHaveIt() {
        assertEquals("s.yaml:1: unknown key 'k_steps'; did you mean a_sync_configs.k_steps or gradient_merge_configs.k_steps"
                + " or localsgd_configs.k_steps?", yaml("k_steps: 4\n"));
    }

    @Test
    void dottedKeysWorkAtTheTopLevelOfYamlAndJson() {
        DistributedStrategy s = DistributedStrategy.parse("gradient_merge: true\ngradient_merge_configs.k_steps: 4\n",
                StrategyFormat.YAML, "s.yaml");
        assertEquals(4, s.gradientMergeConfigs().kSteps());
    }

    // ---- wrong types

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nccl_comm_num: two|s.yaml:1: nccl_comm_num: expected an integer, got \"two\"",
        "nccl_comm_num: '2'|s.yaml:1: nccl_comm_num: expected an integer, got \"2\"",
        "fuse_grad_size_in_MB: 2.5|s.yaml:1: fuse_grad_size_in_MB: expected an integer, got 2.5",
        "amp: enabled|s.yaml:1: amp: expected true or false, got \"enabled\"",
        "amp: 1|s.yaml:1: amp: expected true or false, got 1",
        "amp_configs: {init_loss_scaling: big}|s.yaml:1: amp_configs.init_loss_scaling: expected a number, got \"big\"",
        "amp_configs: {init_loss_scaling: .inf}|s.yaml:1: amp_configs.init_loss_scaling: expected a finite number, got .inf",
        "amp_configs: {custom_white_list: conv2d}|s.yaml:1: amp_configs.custom_white_list: expected a list, got \"conv2d\"",
        "amp_configs: {custom_white_list: [conv2d, 5]}|s.yaml:1: amp_configs.custom_white_list: expected a list of strings, but 5 is not a string",
        "nccl_comm_num: 99999999999|s.yaml:1: nccl_comm_num: 99999999999 is too large for an integer (at most 2147483647)",
        "mode: [collective]|s.yaml:1: mode: expected one of collective, ps, got [\"collective\"]",
    })
    void wrongTypeSaysWhatWasExpectedAndWhatCame(String text, String message) {
        assertEquals(message, yaml(text));
    }

    @Test
    void wrongTypeInJsonAndPrototxt() {
        assertEquals("s.json:1: nccl_comm_num: expected an integer, got \"2\"",
                problem(StrategyFormat.JSON, "{\"nccl_comm_num\": \"2\"}"));
        assertEquals("s.prototxt:1: amp: expected true or false, got \"true\"",
                problem(StrategyFormat.PROTOTXT, "amp: \"true\""));
        assertEquals("s.prototxt:1: nccl_comm_num: expected an integer, got 2.0",
                problem(StrategyFormat.PROTOTXT, "nccl_comm_num: 2.0"));
    }

    // ---- out of range

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nccl_comm_num: 0|nccl_comm_num: 0 is out of range: must be at least 1",
        "fuse_grad_size_in_MB: -8|fuse_grad_size_in_MB: -8 is out of range: must be at least 1",
        "fuse_grad_size_in_TFLOPS: 20.5|fuse_grad_size_in_TFLOPS: 20.5 is out of range: must be a whole number, at least 1",
        "last_comm_group_size_MB: -1|last_comm_group_size_MB: -1.0 is out of range: must be greater than 0.0",
        "conv_workspace_size_limit: -1|conv_workspace_size_limit: -1 is out of range: must be at least 0",
        "hierarchical_allreduce_inter_nranks: 0|hierarchical_allreduce_inter_nranks: 0 is out of range: must be at least 1",
        "gradient_merge_configs: {k_steps: 0}|gradient_merge_configs.k_steps: 0 is out of range: must be at least 1",
        "localsgd_configs: {k_steps: 0}|localsgd_configs.k_steps: 0 is out of range: must be at least 1",
        "localsgd_configs: {begin_step: 0}|localsgd_configs.begin_step: 0 is out of range: must be at least 1",
        "amp_configs: {init_loss_scaling: 0}|amp_configs.init_loss_scaling: 0.0 is out of range: must be greater than 0.0",
        "amp_configs: {init_loss_scaling: -1024}|amp_configs.init_loss_scaling: -1024.0 is out of range: must be greater than 0.0",
        "amp_configs: {incr_ratio: 1}|amp_configs.incr_ratio: 1.0 is out of range: must be greater than 1.0",
        "amp_configs: {decr_ratio: 1.5}|amp_configs.decr_ratio: 1.5 is out of range: must be between 0.0 and 1.0, both excluded",
        "amp_configs: {incr_every_n_steps: 0}|amp_configs.incr_every_n_steps: 0 is out of range: must be at least 1",
        "amp_configs: {decr_every_n_nan_or_inf: 0}|amp_configs.decr_every_n_nan_or_inf: 0 is out of range: must be at least 1",
        "lars_configs: {lars_coeff: 0}|lars_configs.lars_coeff: 0.0 is out of range: must be greater than 0.0",
        "lamb_configs: {lamb_weight_decay: -0.1}|lamb_configs.lamb_weight_decay: -0.1 is out of range: must be at least 0.0",
        "dgc_configs: {rampup_step: 0}|dgc_configs.rampup_step: 0 is out of range: must be at least 1",
        "dgc_configs: {sparsity: [0.5, 1.0]}|dgc_configs.sparsity: [0.5, 1.0] is out of range: must be a list whose entries are all at least 0 and below 1",
        "execution_strategy: {num_threads: 0}|execution_strategy.num_threads: 0 is out of range: must be at least 1",
        "thread_num: 0|thread_num (execution_strategy.num_threads): 0 is out of range: must be at least 1",
        "execution_strategy: {num_iteration_per_drop_scope: 0}|execution_strategy.num_iteration_per_drop_scope: 0 is out of range: must be at least 1",
    })
    void outOfRangeSaysWhatIsAllowed(String text, String message) {
        assertEquals("s.yaml:1: " + message, yaml(text));
    }

    @Test
    void asyncKStepsBelowMinusOneIsOutOfRange() {
        assertEquals("s.yaml:3: a_sync_configs.k_steps: -2 is out of range: must be at least -1",
                yaml("mode: ps\na_sync_configs:\n  k_steps: -2\n"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "mode: colective|mode: 'colective' is not allowed; allowed: collective, ps (did you mean collective?)",
        "mode: parameter_server|mode: 'parameter_server' is not allowed; allowed: collective, ps",
        "protocol: star_servr|protocol: 'star_servr' is not allowed; allowed: grpc, grpc++, star_server, star_server_lite (did you mean star_server?)",
        "gradient_scale_configs: {scale_strategy: mean}|gradient_scale_configs.scale_strategy: 'mean' is not allowed; allowed: avg, sum",
    })
    void misspeltChoiceNamesTheAllowedOnes(String text, String message) {
        assertEquals("s.yaml:1: " + message, yaml(text));
    }

    @Test
    void modeIsAProtobufEnumSoItsCaseIsFree() {
        assertEquals(Mode.PS, DistributedStrategy.parse("mode: PS", StrategyFormat.PROTOTXT, "s.prototxt").mode());
        assertEquals(Mode.COLLECTIVE, DistributedStrategy.parse("mode: Collective\n", StrategyFormat.YAML, "s.yaml").mode());
    }

    // ---- structure

    @Test
    void aKeyGivenTwiceIsAMistakeEvenUnderAnAlias() {
        assertEquals("s.yaml:3: nccl_comm_num is set more than once (nccl_comm_num at line 1, nccl_comm_num at line 3); keep one",
                yaml("nccl_comm_num: 2\namp: false\nnccl_comm_num: 3\n"));
        assertEquals("s.yaml:3: execution_strategy.num_threads is set more than once (thread_num at line 1,"
                        + " execution_strategy.num_threads at line 3); keep one",
                yaml("thread_num: 2\nexecution_strategy:\n  num_threads: 4\n"));
        assertEquals("s.prototxt:2: nccl_comm_num is set more than once (nccl_comm_num at line 1, nccl_comm_num at line 2); keep one",
                problem(StrategyFormat.PROTOTXT, "nccl_comm_num: 1\nnccl_comm_num: 2\n"));
        assertEquals("s.json:1: build_strategy.fuse_bn_act_ops is set more than once (fuse_bn_act_ops at line 1,"
                        + " build_strategy.fuse_bn_act_ops at line 1); keep one",
                problem(StrategyFormat.JSON, "{\"fuse_bn_act_ops\": true, \"build_strategy\": {\"fuse_bn_act_ops\": false}}"));
    }

    @Test
    void aGroupGivenAsOneValueOrAValueGivenAsABlock() {
        assertEquals("s.yaml:1: amp_configs is a group of settings (init_loss_scaling, incr_every_n_steps,"
                + " decr_every_n_nan_or_inf, ...), not a single value; got 5", yaml("amp_configs: 5\n"));
        assertEquals("s.yaml:1: nccl_comm_num takes a single value (an integer, at least 1), not a block",
                yaml("nccl_comm_num:\n  first: 1\n  second: 2\n"));
        assertEquals("s.prototxt:1: nccl_comm_num takes a single value (an integer, at least 1), not a block",
                problem(StrategyFormat.PROTOTXT, "nccl_comm_num { x: 1 }"));
        assertEquals("s.yaml:1: nccl_comm_num: no value given; expected an integer, at least 1", yaml("nccl_comm_num:\n"));
    }

    @Test
    void emptyFilesAndEmptyGroupsMeanDefaults() {
        assertEquals(new DistributedStrategy(), DistributedStrategy.parse("", StrategyFormat.YAML, "s.yaml"));
        assertEquals(new DistributedStrategy(), DistributedStrategy.parse("# nothing\n", StrategyFormat.YAML, "s.yaml"));
        assertEquals(new DistributedStrategy(), DistributedStrategy.parse("amp_configs:\n", StrategyFormat.YAML, "s.yaml"));
        assertEquals(new DistributedStrategy(), DistributedStrategy.parse("{}", StrategyFormat.JSON, "s.json"));
        assertEquals(new DistributedStrategy(), DistributedStrategy.parse("recompute_configs {\n}\n", StrategyFormat.PROTOTXT, "s.prototxt"));
    }

    @Test
    void everyProblemOfAFileIsReportedAtOnceInLineOrder() {
        assertEquals(List.of(
                "s.yaml:1: unknown key 'nccl_comm_nums'; did you mean nccl_comm_num?",
                "s.yaml:2: fuse_grad_size_in_MB: -1 is out of range: must be at least 1",
                "s.yaml:4: amp_configs.incr_ratio: expected a number, got \"fast\""),
                problems(StrategyFormat.YAML, "nccl_comm_nums: 2\nfuse_grad_size_in_MB: -1\namp_configs:\n  incr_ratio: fast\n"));
    }

    // ---- input quoted in messages: a bounded prefix, escaped

    @Test
    void aMegabyteValueOrKeyIsQuotedAsABoundedPrefixWithItsLength() {
        String big = "a".repeat(1 << 20);
        String value = yaml("mode: ps\nprotocol: " + big + "\n");
        assertEquals("s.yaml:2: protocol: '" + "a".repeat(77) + "...' (1048576 characters) is not allowed; allowed: grpc,"
                + " grpc++, star_server, star_server_lite", value);
        String key = problem(StrategyFormat.PROTOTXT, big + ": 1\n");
        assertEquals("s.prototxt:1: unknown key '" + "a".repeat(77) + "...' (1048576 characters); docs/STRATEGY.md lists every key",
                key);
        String number = problem(StrategyFormat.PROTOTXT, "nccl_comm_num: " + "9".repeat(100_000) + "\n");
        assertEquals(true, number.length() < 200 && number.contains("(100000 characters)"), number);
    }

    @Test
    void controlCharactersInAValueAreEscaped() {
        assertEquals("s.prototxt:1: protocol: '\\x1b[31mgrpc\\x07' is not allowed; allowed: grpc, grpc++, star_server,"
                + " star_server_lite", problem(StrategyFormat.PROTOTXT, "protocol: \"\u001b[31mgrpc\u0007\"\n"));
        assertEquals("s.json:1: protocol: '\\x1b]0;title' is not allowed; allowed: grpc, grpc++, star_server,"
                + " star_server_lite", problem(StrategyFormat.JSON, "{\"protocol\": \"\\u001b]0;title\"}"));
    }

    // ---- malformed syntax

    @Test
    void malformedYamlNamesTheLine() {
        String message = yaml("amp: true\namp_configs:\n  custom_white_list: [conv2d\n  incr_ratio: 2.0\n");
        assertEquals(true, message.startsWith("s.yaml:4: syntax error: "), message);
        assertEquals("s.yaml:1: the file must hold a mapping of keys to values, but it holds a list",
                yaml("- amp\n- recompute\n"));
        assertEquals("s.yaml:1: the file must hold a mapping of keys to values, but it holds the single value amp",
                yaml("amp\n"));
    }

    @Test
    void malformedJsonNamesTheLine() {
        String message = problem(StrategyFormat.JSON, "{\n  \"nccl_comm_num\": 2,\n  \"amp\": \n}");
        assertEquals(true, message.startsWith("s.json:4: syntax error: Unexpected character ('}'"), message);
        assertEquals("s.json:1: amp_configs.custom_white_list: a list here holds plain values (strings or numbers),"
                + " not nested lists or mappings", problem(StrategyFormat.JSON, "{\"amp_configs\": {\"custom_white_list\": [[\"a\"]]}}"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "amp_configs = {|s.prototxt:1: syntax error: expected ':' or '{' after 'amp_configs', found '='",
        "amp: true\\namp_configs {\\n  incr_ratio: 2.0\\n|s.prototxt:4: syntax error: the block 'amp_configs {' opened at line 2 is never closed (expected '}')",
        "amp: true\\n}\\n|s.prototxt:2: syntax error: expected a key, found '}' with no block open",
        "recompute_configs {\\n  checkpoints: \"fc_0\\n}|s.prototxt:2: syntax error: unterminated string (a string must close on the line it starts)",
        "nccl_comm_num: 1.2.3|s.prototxt:1: syntax error: malformed number '1.2.3'",
        "nccl_comm_num:|s.prototxt:1: syntax error: expected a value after 'nccl_comm_num:', found the end of the file",
        "nccl_comm_num: 2 @|s.prototxt:1: syntax error: unexpected character '@'",
        "amp_configs { custom_white_list: [\"a\" 5] }|s.prototxt:1: syntax error: expected ',' or ']' in the list of 'custom_white_list', found '5'",
        "recompute_configs { checkpoints: \"a\\q\" }|s.prototxt:1: syntax error: unknown escape '\\q' in a string (known: \\n \\t \\r \\\\ \\\" \\')",
    })
    void malformedPrototxtNamesTheLine(String text, String message) {
        assertEquals(message, problem(StrategyFormat.PROTOTXT, text.replace("\\n", "\n")));
    }

    // ---- contradictions

    @Test
    void aSyncInCollectiveModeIsAContradiction() {
        assertEquals("s.yaml:2: a_sync applies only to mode ps, but mode is collective (the default); set mode: ps or remove it",
                yaml("amp: false\na_sync: true\n"));
        assertEquals("s.yaml:2: a_sync, a_sync_configs.k_steps apply only to mode ps, but mode is collective (line 1);"
                        + " set mode: ps or remove them",
                yaml("mode: collective\na_sync: true\na_sync_configs:\n  k_steps: 4\n"));
        DistributedStrategy ps = DistributedStrategy.parse("mode: ps\na_sync: true\na_sync_configs: {k_steps: 4}\n",
                StrategyFormat.YAML, "s.yaml");
        assertEquals(4, ps.aSyncConfigs().kSteps());
        DistributedStrategy collective = DistributedStrategy.parse("a_sync: false\n", StrategyFormat.YAML, "s.yaml");
        assertEquals(false, collective.aSync(), "a_sync: false agrees with collective (synchronous) training");
    }

    @Test
    void geoWithoutASyncIsRefusedInPsMode() {
        assertEquals("s.yaml:4: a_sync_configs.k_steps 4 asks for geo mode, but a_sync is false (line 2); geo needs"
                        + " a_sync: true (or set k_steps: -1 for sync mode)",
                yaml("mode: ps\na_sync: false\na_sync_configs:\n  k_steps: 4\n"));
    }

    @Test
    void collectiveKnobsInPsModeAreAContradiction() {
        assertEquals("s.yaml:2: nccl_comm_num applies only to mode collective, but mode is ps (line 1);"
                        + " set mode: collective or remove it",
                yaml("mode: ps\nnccl_comm_num: 2\n"));
        assertEquals("s.yaml:2: dgc, fuse_grad_size_in_MB, localsgd_configs.k_steps apply only to mode collective, but"
                        + " mode is ps (line 1); set mode: collective or remove them",
                yaml("mode: ps\ndgc: true\nfuse_grad_size_in_MB: 64\nlocalsgd_configs: {k_steps: 4}\n"));
        DistributedStrategy moot = DistributedStrategy.parse("mode: ps\nfuse_all_reduce_ops: true\ndgc: false\n",
                StrategyFormat.YAML, "s.yaml");
        assertEquals(Mode.PS, moot.mode(), "a collective knob at its default asks for nothing");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "lars: true\\nlamb: true|s.yaml:2: lars (line 1) and lamb (line 2) are both on: a job has one optimizer, so choose LARS or LAMB",
        "sync_batch_norm: true\\ngradient_merge: true|s.yaml:2: sync_batch_norm (line 1) and gradient_merge (line 2) are both on:"
                + " Fleet4J synchronises batch-norm statistics on every step, while gradient merge runs k_steps steps without"
                + " communication; turn one off",
        "localsgd: true\\ngradient_merge: true|s.yaml:2: localsgd (line 1) and gradient_merge (line 2) are both on:"
                + " local SGD already skips communication between its averaging steps; turn one off",
        "localsgd: true\\ndgc: true|s.yaml:2: localsgd (line 1) and dgc (line 2) are both on: local SGD averages parameters,"
                + " DGC compresses gradient allreduces; turn one off",
        "dgc: true\\nfp16_allreduce: true|s.yaml:2: dgc (line 1) and fp16_allreduce (line 2) are both on: DGC sends sparse"
                + " gradients and cannot also cast them to fp16; turn one off",
        "recompute: true|s.yaml:1: recompute is on but recompute_configs.checkpoints is empty; name the variables to keep,"
                + " e.g. checkpoints: [fc_0.tmp_0, fc_1.tmp_0]",
        "amp_configs:\\n  custom_white_list: [mul, conv2d]\\n  custom_black_list: [conv2d]|s.yaml:3: amp_configs.custom_white_list"
                + " and amp_configs.custom_black_list both name [conv2d]; an op runs in one precision, so list it once",
    })
    void contradictionsNameBothSettingsAndTheirLines(String text, String message) {
        assertEquals(message, yaml(text.replace("\\n", "\n")));
    }

    @Test
    void contradictionsSetInCodeAreCaughtByValidate() {
        DistributedStrategy s = new DistributedStrategy().lars(true).lamb(true);
        StrategyException e = assertThrows(StrategyException.class, s::validate);
        assertEquals("lars (set in code) and lamb (set in code) are both on: a job has one optimizer, so choose LARS or LAMB",
                e.getMessage());
    }

    // ---- the Java API

    @Test
    void javaSettersCheckTypeAndRange() {
        DistributedStrategy s = new DistributedStrategy();
        assertEquals("nccl_comm_num: 0 is out of range: must be at least 1",
                assertThrows(StrategyException.class, () -> s.ncclCommNum(0)).getMessage());
        assertEquals("unknown key 'fuse_grad_size_in_mb'; did you mean fuse_grad_size_in_MB?",
                assertThrows(StrategyException.class, () -> s.set("fuse_grad_size_in_mb", 16)).getMessage());
        assertEquals("nccl_comm_num: expected an integer, got 2 (String)",
                assertThrows(StrategyException.class, () -> s.set("nccl_comm_num", "2")).getMessage());
        assertEquals("thread_num (execution_strategy.num_threads): 0 is out of range: must be at least 1",
                assertThrows(StrategyException.class, () -> s.set("thread_num", 0)).getMessage());
        assertEquals("amp_configs.init_loss_scaling: expected a number, got NaN (Double)",
                assertThrows(StrategyException.class, () -> s.ampConfigs().initLossScaling(Double.NaN)).getMessage());
        assertEquals("mode: 'async' is not allowed; allowed: collective, ps",
                assertThrows(StrategyException.class, () -> s.set("mode", "async")).getMessage());
        assertEquals(new DistributedStrategy(), s, "failed sets change nothing");
    }

    // ---- files

    @Test
    void missingFileAndUnknownExtension() {
        Path missing = dir.resolve("missing.yaml");
        assertEquals(missing + ": no such strategy file",
                assertThrows(StrategyException.class, () -> DistributedStrategy.load(missing)).getMessage());
        Path toml = dir.resolve("strategy.toml");
        assertEquals(toml + ": cannot tell the format from the file name; name it .yaml, .yml, .json, .prototxt or .pbtxt",
                assertThrows(StrategyException.class, () -> DistributedStrategy.load(toml)).getMessage());
    }

    @Test
    void loadNamesTheFileAsGiven() throws Exception {
        Path file = dir.resolve("bad.yaml");
        java.nio.file.Files.writeString(file, "nccl_comm_num: 0\n");
        assertEquals(file + ":1: nccl_comm_num: 0 is out of range: must be at least 1",
                assertThrows(StrategyException.class, () -> DistributedStrategy.load(file)).getMessage());
    }

    @Test
    void binaryFileIsNamedAsNotText() throws Exception {
        Path gzip = dir.resolve("strategy.yaml");
        java.nio.file.Files.write(gzip, new byte[] {'a', ':', ' ', (byte) 0x1f, (byte) 0x8b, 8, 0});
        assertEquals(gzip + ": not a text file (byte 4 is 0x8b, not UTF-8); a strategy file is YAML, JSON or prototxt text",
                assertThrows(StrategyException.class, () -> DistributedStrategy.load(gzip)).getMessage());
        Path nul = dir.resolve("strategy.json");
        java.nio.file.Files.write(nul, new byte[] {'{', 0, '}'});
        assertEquals(nul + ": not a text file (byte 1 is 0x00, a NUL); a strategy file is YAML, JSON or prototxt text",
                assertThrows(StrategyException.class, () -> DistributedStrategy.load(nul)).getMessage());
    }
}
