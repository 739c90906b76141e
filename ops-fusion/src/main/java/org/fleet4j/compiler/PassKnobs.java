package org.fleet4j.compiler;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.strategy.schema.KnobReader;
import org.fleet4j.strategy.schema.KnobUse;

/** The compiler's part of the knobs in effect: what the registered passes declare they read. */
@AutoService(KnobReader.class)
public final class PassKnobs implements KnobReader {
    @Override
    public String reader() {
        return "compiler passes";
    }

    @Override
    public List<KnobUse> knobs() {
        return PassRegistry.knobs();
    }
}
