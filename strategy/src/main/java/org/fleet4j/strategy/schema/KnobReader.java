package org.fleet4j.strategy.schema;

import java.util.List;

/**
 * A part of the runtime that acts on strategy knobs: the compiler's passes, the executor, Fleet. Each declares the
 * knobs it reads, and is found by {@link java.util.ServiceLoader} (this module imports nothing of the runtime), so
 * which knobs are in effect ({@link StrategySchema#inEffect}) is derived from what is on the class path, not kept by
 * hand.
 */
public interface KnobReader {
    /** Who reads them, for reports: "compiler passes", "executor and Fleet". */
    String reader();

    List<KnobUse> knobs();
}
