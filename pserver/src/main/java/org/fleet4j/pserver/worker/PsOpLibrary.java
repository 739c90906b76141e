package org.fleet4j.pserver.worker;

import java.util.List;
import java.util.stream.Stream;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;

/** pull_dense, push_dense, pull_sparse, push_sparse and lookup_sparse_table, registered through {@link java.util.ServiceLoader}. */
public final class PsOpLibrary implements OpLibrary {
    @Override
    public List<OpSpec> specs() {
        return Stream.concat(PsOps.specs().stream(), InferenceOps.specs().stream()).toList();
    }
}
