package org.fleet4j.collective.nccl;

import com.google.auto.service.AutoService;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.DeviceBackendProvider;
import org.fleet4j.collective.group.DeviceCommunicator;
import org.fleet4j.collective.group.GroupContext;

/**
 * Registers NCCL as the device backend for CUDA buffers. Only {@link #open} touches the JavaCPP binding, so finding
 * and constructing this provider loads no CUDA class.
 */
@AutoService(DeviceBackendProvider.class)
public final class NcclBackend implements DeviceBackendProvider {
    @Override
    public Backend backend() {
        return Backend.NCCL;
    }

    @Override
    public DeviceCommunicator open(GroupContext ctx, int device) {
        NcclLibrary.require();
        return NcclCommunicator.open(ctx.store(), ctx.name(), ctx.rank(), ctx.size(), device, ctx.options().timeout());
    }

    /** The NCCL library's version, e.g. "2.28.9"; loads the binding. */
    public static String ncclVersion() {
        NcclLibrary.require();
        return NcclCommunicator.version();
    }
}
