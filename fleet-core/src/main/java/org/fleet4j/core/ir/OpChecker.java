package org.fleet4j.core.ir;

import java.util.ServiceLoader;

/**
 * Checks an op against its definition as it enters a block: slots, attributes and their defaults, output vars and
 * their inferred shapes. The definitions live in {@code org.fleet4j.core.ops}, which depends on the IR; it provides
 * the checker through {@link ServiceLoader}, so the IR needs no import of the ops and the two packages do not form a
 * cycle.
 */
public interface OpChecker {
    /** Returns the normalised op (defaults filled in) or throws {@link IrException} naming what is wrong. */
    Op check(Op op, Block block, int index);

    /** The checker of the op definitions on the classpath. */
    static OpChecker installed() {
        return Installed.CHECKER;
    }

    /** Loaded once, on first use. */
    final class Installed {
        private static final OpChecker CHECKER = ServiceLoader.load(OpChecker.class, OpChecker.class.getClassLoader())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no op definitions on the classpath: fleet4j-core's "
                        + "META-INF/services/" + OpChecker.class.getName() + " is missing (a repackaged jar that drops it?)"));

        private Installed() {
        }
    }
}
