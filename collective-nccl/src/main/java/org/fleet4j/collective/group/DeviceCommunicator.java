package org.fleet4j.collective.group;

import java.time.Duration;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CudaBuffer;

/**
 * One rank's communicator of a device backend. A process group calls it one operation at a time, in issue order, on
 * whichever thread runs the group's operations; each call returns once the operation has finished on the device, or
 * throws naming the group and the call.
 */
public interface DeviceCommunicator extends AutoCloseable {
    Backend backend();

    /** In place: every rank ends with the element-wise reduction of all ranks' buffers. */
    void allreduce(OpCall call, CudaBuffer buffer, Duration timeout);

    /** In place: every rank ends with root's buffer. */
    void broadcast(OpCall call, CudaBuffer buffer, Duration timeout);

    @Override
    void close();
}
