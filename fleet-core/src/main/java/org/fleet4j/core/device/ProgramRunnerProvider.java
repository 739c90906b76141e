package org.fleet4j.core.device;

import org.fleet4j.core.ops.ExecContext;

/**
 * Service interface ({@link java.util.ServiceLoader}) through which a device kind other than the CPU supplies the
 * runner of programs on its devices, so fleet-core never links against the vendor's executor.
 */
public interface ProgramRunnerProvider {
    /** The device kind this provider runs programs on, e.g. "gpu". */
    String kind();

    /**
     * A runner on {@code device}, which is of this provider's kind, whose kernels are made with {@code context} (the
     * job's rings, placements and services).
     */
    ProgramRunner create(Device device, ExecContext context);
}
