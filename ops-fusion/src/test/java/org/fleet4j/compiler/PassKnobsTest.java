package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.rules.World;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.KnobReader;
import org.fleet4j.strategy.schema.KnobUse;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/** The knobs the compiler calls honoured are the ones its passes declare, and each declared knob is really read. */
class PassKnobsTest {
    /** The defaults, with the one amp dtype the amp pass can be made with. */
    private static EffectiveStrategy strategy() {
        return EffectiveStrategy.resolve(new DistributedStrategy().ampConfigs(c -> c.dtype("bfloat16")), new World(2, 2, "cpu"));
    }

    @Test
    void everyKnobAPassDeclaresIsReadWhenThePassIsSelectedOrMade() {
        PassContext selecting = PassContext.of(strategy());
        Pipeline.passNames(selecting);
        List<String> unread = new ArrayList<>();
        for (String name : PassRegistry.names()) {
            PassContext making = PassContext.of(strategy());
            PassRegistry.create(name, making);
            Set<Field<?>> read = new HashSet<>(selecting.knobsRead());
            read.addAll(making.knobsRead());
            for (KnobUse use : PassRegistry.knobs(name)) {
                if (!read.contains(use.field())) {
                    unread.add(name + " declares " + use.field().key() + " but neither selecting nor making it reads it");
                }
            }
        }
        assertEquals(List.of(), unread);
    }

    @Test
    void theKnobsInEffectComeFromThePassesDeclarations() {
        List<KnobReader> readers = ServiceLoader.load(KnobReader.class).stream().map(ServiceLoader.Provider::get).toList();
        assertTrue(readers.stream().anyMatch(r -> r instanceof PassKnobs), "ops-fusion provides its passes' knobs: " + readers);
        assertEquals(PassRegistry.knobs(), new PassKnobs().knobs());
        assertTrue(StrategySchema.inEffect(StrategySchema.FUSE_GRAD_SIZE_IN_MB, 16.0), "a bucketing setting is in effect");
        assertTrue(StrategySchema.inEffect(StrategySchema.AMP_DTYPE, "bfloat16"));
        assertFalse(StrategySchema.inEffect(StrategySchema.AMP_DTYPE, "float16"), "amp runs bfloat16 only");
        assertFalse(StrategySchema.inEffect(StrategySchema.LARS, true), "no pass reads lars");
    }
}
