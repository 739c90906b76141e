package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RoundTripTest {
    @TempDir
    Path dir;

    /** Every field set to a value other than its default, except where two would contradict. */
    /**
     * Two valid strategies that between them change every field: one of mode ps (the collective-only knobs set
     * explicitly, at their defaults) and one of mode collective (the parameter-server knobs not set).
     */
    static List<DistributedStrategy> everyFieldChanged() {
        DistributedStrategy ps = new DistributedStrategy();
        DistributedStrategy collective = new DistributedStrategy();
        for (Field<?> field : StrategySchema.fields()) {
            ps.set(field.key(), ConsistencyRules.collectiveOnly(field) ? field.defaultValue() : otherValue(field));
            if (!ConsistencyRules.psOnly(field)) {
                collective.set(field.key(), otherValue(field));
            }
        }
        // Pairs that cannot both be on: keep the second at its default, but still set explicitly.
        return List.of(ps.set("mode", "ps").set("a_sync", false),
                collective.set("mode", "collective").set("lamb", false).set("sync_batch_norm", false)
                        .set("localsgd", false).set("fp16_allreduce", false));
    }

    private static Object otherValue(Field<?> field) {
        Object def = field.defaultValue();
        return switch (field.kind()) {
            case BOOL -> !(Boolean) def;
            case INT -> (Integer) def + 1;
            case FLOAT -> List.of((Double) def + 1, (Double) def / 2).stream()
                    .filter(v -> field.constraint().violation(v) == null).findFirst().orElseThrow();
            case CHOICE, ENUM -> field.choices().stream().filter(c -> !c.equals(def)).reduce((a, b) -> b).orElseThrow();
            case STRING_LIST -> List.of(field.name() + "_a", field.name() + "_b");
            case FLOAT_LIST -> List.of(0.5, 0.75, 0.999);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"strategy.yaml", "strategy.yml", "strategy.json", "strategy.prototxt", "strategy.pbtxt"})
    void everyFieldSurvivesSaveAndLoad(String name) {
        for (DistributedStrategy original : everyFieldChanged()) {
            Path file = dir.resolve(name);
            original.save(file);
            DistributedStrategy loaded = DistributedStrategy.load(file);
            assertEquals(original, loaded);
            for (Field<?> field : StrategySchema.fields()) {
                assertEquals(original.get(field), loaded.get(field), field.key());
                assertEquals(original.isSet(field), loaded.isSet(field), field.key() + " stays explicitly set, or unset");
            }
            assertEquals(original.snapshot(), loaded.snapshot());
        }
    }

    @Test
    void theTestStrategyReallyChangesAlmostEveryField() {
        List<DistributedStrategy> changed = everyFieldChanged();
        List<String> stillDefault = StrategySchema.fields().stream()
                .filter(f -> changed.stream().allMatch(c -> c.get(f).equals(f.defaultValue()))).map(Field::key).toList();
        assertEquals(java.util.Set.of("lamb", "sync_batch_norm", "fp16_allreduce", "localsgd"), java.util.Set.copyOf(stillDefault));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s.yaml", "s.json", "s.prototxt"})
    void aDefaultStrategySavesNothingAndLoadsBackEqual(String name) throws Exception {
        Path file = dir.resolve(name);
        new DistributedStrategy().save(file);
        DistributedStrategy loaded = DistributedStrategy.load(file);
        assertEquals(new DistributedStrategy(), loaded);
        assertTrue(StrategySchema.fields().stream().noneMatch(loaded::isSet), Files.readString(file));
    }

    @ParameterizedTest
    @ValueSource(strings = {"s.yaml", "s.json", "s.prototxt"})
    void awkwardStringsAndNumbersSurvive(String name) {
        DistributedStrategy original = new DistributedStrategy()
                .recompute(true)
                .recomputeConfigs(c -> c.checkpoints("quote\"d", "back\\slash", "tab\there", "# not a comment",
                        "变量", "true", "123", "", "  spaced  "))
                .ampConfigs(c -> c.initLossScaling(1e-10).customBlackList(List.of()))
                .larsConfigs(c -> c.larsCoeff(123456789.125))
                .dgcConfigs(c -> c.sparsity(0.0, 1e-7, 0.9999999));
        Path file = dir.resolve(name);
        original.save(file);
        assertEquals(original, DistributedStrategy.load(file));
    }

    @Test
    void explicitDefaultsAreKeptApartFromUnsetOnes() {
        DistributedStrategy explicit = new DistributedStrategy().fuseGradSizeInMB(32);
        assertNotEquals(new DistributedStrategy(), explicit, "setting a field records the user's intent");
        Path file = dir.resolve("explicit.prototxt");
        explicit.save(file);
        assertTrue(DistributedStrategy.load(file).isSet(StrategySchema.FUSE_GRAD_SIZE_IN_MB));
    }

    @Test
    void prototxtIsWrittenAsPaddleWritesIt() throws Exception {
        Path file = dir.resolve("paddle.prototxt");
        new DistributedStrategy().ncclCommNum(2).fuseGradSizeInTFLOPS(20)
                .ampConfigs(c -> c.customWhiteList("conv2d", "mul"))
                .executionStrategy(c -> c.numThreads(4)).save(file);
        assertEquals("""
                # Fleet4J distributed strategy; docs/STRATEGY.md describes every key
                nccl_comm_num: 2
                fuse_grad_size_in_TFLOPS: 20.0
                amp_configs {
                  custom_white_list: "conv2d"
                  custom_white_list: "mul"
                }
                execution_strategy {
                  num_threads: 4
                }
                """, Files.readString(file));
    }

    @Test
    void saveToAnUnknownExtensionSaysWhichOnesWork() {
        StrategyException e = org.junit.jupiter.api.Assertions.assertThrows(StrategyException.class,
                () -> new DistributedStrategy().save(dir.resolve("strategy.toml")));
        assertEquals(dir.resolve("strategy.toml") + ": cannot tell the format from the file name;"
                + " name it .yaml, .yml, .json, .prototxt or .pbtxt", e.getMessage());
    }
}
