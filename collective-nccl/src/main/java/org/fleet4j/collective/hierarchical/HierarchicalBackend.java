package org.fleet4j.collective.hierarchical;

import com.google.auto.service.AutoService;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.BackendProvider;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.Locality;
import org.fleet4j.collective.group.Suitability;

/** Registers {@link HierarchicalProcessGroup}: shm inside each host, tcp among one leader per host. */
@AutoService(BackendProvider.class)
public final class HierarchicalBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.HIERARCHICAL;
    }

    @Override
    public Suitability suitability(Locality locality) {
        if (locality.allOnOneHost()) {
            return Suitability.unavailable("for several hosts, the group has " + locality);
        }
        return locality.everyHostHasPeers()
                ? Suitability.available(20, locality + ", each with several: shared memory inside each host, tcp"
                        + " among one leader per host")
                : Suitability.unavailable("needs several ranks on every host, the group has " + locality
                        + " with a host of one");
    }

    @Override
    public AbstractProcessGroup open(GroupContext ctx) {
        return HierarchicalProcessGroup.open(ctx);
    }
}
