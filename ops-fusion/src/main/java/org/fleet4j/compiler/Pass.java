package org.fleet4j.compiler;

import org.fleet4j.core.ir.Program;

/**
 * One program rewrite: pure (the argument is never modified; the result is a new program, or the same one when
 * nothing matched), testable alone, registered by name in {@link PassRegistry}.
 */
public interface Pass {
    /** The strategy knob's name, e.g. "fuse_elewise_add_act_ops". */
    String name();

    PassResult apply(Program program);
}
