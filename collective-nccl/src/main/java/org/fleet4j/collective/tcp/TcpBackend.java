package org.fleet4j.collective.tcp;

import org.fleet4j.collective.AbstractProcessGroup;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.BackendProvider;
import org.fleet4j.collective.GroupContext;

/** Registers {@link TcpProcessGroup}: a ring over TCP, for ranks on any hosts. */
public final class TcpBackend implements BackendProvider {
    @Override
    public Backend backend() {
        return Backend.TCP;
    }

    @Override
    public AbstractProcessGroup open(GroupContext ctx) {
        return new TcpProcessGroup(ctx);
    }
}
