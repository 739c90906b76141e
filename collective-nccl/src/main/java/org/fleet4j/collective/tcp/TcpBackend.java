package org.fleet4j.collective.tcp;

import com.google.auto.service.AutoService;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.BackendProvider;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.Locality;
import org.fleet4j.collective.group.Suitability;

/** Registers {@link TcpProcessGroup}: a ring over TCP, for ranks on any hosts. */
@AutoService(BackendProvider.class)
public final class TcpBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.TCP;
    }

    @Override
    public Suitability suitability(Locality locality) {
        return Suitability.available(10, locality + ": a ring over TCP runs anywhere");
    }

    @Override
    public AbstractProcessGroup open(GroupContext ctx) {
        return new TcpProcessGroup(ctx);
    }
}
