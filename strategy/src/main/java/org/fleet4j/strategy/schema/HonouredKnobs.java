package org.fleet4j.strategy.schema;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** The knobs that the {@link KnobReader}s on the class path declare, loaded once. */
final class HonouredKnobs {
    private static final List<KnobUse> USES = load();

    private HonouredKnobs() {
    }

    private static List<KnobUse> load() {
        List<KnobUse> uses = new ArrayList<>();
        for (KnobReader reader : ServiceLoader.load(KnobReader.class, KnobReader.class.getClassLoader())) {
            uses.addAll(reader.knobs());
        }
        return List.copyOf(uses);
    }

    /** Whether some reader acts on this field at this value. */
    static boolean inEffect(Field<?> field, Object value) {
        return USES.stream().anyMatch(u -> u.field() == field && u.honours().test(value));
    }
}
