package org.fleet4j.collective;

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
