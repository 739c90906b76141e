package org.fleet4j.pserver.worker;

import java.util.List;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;

/** pull_dense, push_dense, pull_sparse and push_sparse, registered through {@link java.util.ServiceLoader}. */
public final class PsOpLibrary implements OpLibrary {
    @Override
    public List<OpSpec> specs() {
        return PsOps.specs();
    }
}
