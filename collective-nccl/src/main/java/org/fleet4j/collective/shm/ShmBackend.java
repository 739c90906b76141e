package org.fleet4j.collective.shm;

import java.util.Arrays;
import org.fleet4j.collective.AbstractProcessGroup;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.BackendProvider;
import org.fleet4j.collective.GroupContext;

/** Registers {@link ShmProcessGroup}: every rank of the group on one host. */
public final class ShmBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.SHM;
    }

    @Override
    public AbstractProcessGroup open(GroupContext ctx) {
        if (!ctx.allOnOneHost()) {
            throw new IllegalArgumentException("backend shm asked for " + ctx + " whose ranks are on several hosts "
                    + Arrays.stream(ctx.hostKeys()).distinct().toList() + "; use tcp or hierarchical");
        }
        return new ShmProcessGroup(ctx);
    }
}
