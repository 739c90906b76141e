package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.OpChecker;

/** The IR's op checker: the {@link OpSpec} registered for the op's type checks it. */
@AutoService(OpChecker.class)
public final class SpecChecker implements OpChecker {
    @Override
    public Op check(Op op, Block block, int index) {
        return OpRegistry.get(op.type()).check(op, block, index);
    }
}
