package org.fleet4j.collective.shm;

import com.google.auto.service.AutoService;
import java.util.Arrays;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.BackendProvider;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.Locality;
import org.fleet4j.collective.group.Suitability;

/** Registers {@link ShmProcessGroup}: every rank of the group on one host. */
@AutoService(BackendProvider.class)
public final class ShmBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.SHM;
    }

    @Override
    public Suitability suitability(Locality locality) {
        return locality.allOnOneHost()
                ? Suitability.available(30, "all " + locality + ": shared memory")
                : Suitability.unavailable("needs every rank on one host, the group has " + locality);
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
