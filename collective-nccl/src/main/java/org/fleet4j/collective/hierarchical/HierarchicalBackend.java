package org.fleet4j.collective.hierarchical;

import org.fleet4j.collective.AbstractProcessGroup;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.BackendProvider;
import org.fleet4j.collective.GroupContext;

/** Registers {@link HierarchicalProcessGroup}: shm inside each host, tcp among one leader per host. */
public final class HierarchicalBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.HIERARCHICAL;
    }

    @Override
    public AbstractProcessGroup open(GroupContext ctx) {
        return HierarchicalProcessGroup.open(ctx);
    }
}
