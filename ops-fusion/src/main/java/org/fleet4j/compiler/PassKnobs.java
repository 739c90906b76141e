package org.fleet4j.compiler;

import java.util.List;
import org.fleet4j.strategy.KnobReader;
import org.fleet4j.strategy.KnobUse;

/** The compiler's part of the knobs in effect: what the registered passes declare they read. */
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
