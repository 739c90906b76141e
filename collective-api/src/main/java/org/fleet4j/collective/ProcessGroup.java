package org.fleet4j.collective;

import java.lang.foreign.MemorySegment;

/**
 * One communicator: a fixed set of ranks that run collectives together. Every call returns at once with a
 * {@link Work} handle; calls on one group complete in issue order, and separate groups run concurrently.
 * Buffers are {@link MemorySegment}s whose size is a whole number of elements of the given dtype; every rank
 * must issue the same calls in the same order with the same sizes, dtypes, ops and roots (checked when
 * {@link GroupOptions#verifyCalls()} is on). An operation may run on the group's progress thread, so buffers must
 * be accessible from any thread (global, automatic or shared arenas, not confined ones) and must not be touched
 * until the operation's {@link Work} is done.
 */
public interface ProcessGroup extends AutoCloseable {
    String name();

    int rank();

    int size();

    /** The backend that runs collectives on host memory (never AUTO). */
    Backend backend();

    /**
     * The backend that runs this group's collectives on the memory of CUDA device {@code device} (nccl), found
     * through {@link java.util.ServiceLoader} and opened over this group's ranks on the first call: a collective call
     * (every rank makes it, or issues its first device collective, at the same point). A group of CPU buffers never
     * opens one, so CPU runs load no CUDA class. Throws {@link CollectiveException} naming what is missing where the
     * backend cannot load.
     */
    Backend deviceBackend(int device);

    GroupOptions options();

    /** In place: every rank ends with the element-wise reduction of all ranks' buffers. */
    Work allreduce(MemorySegment buffer, DataType dtype, ReduceOp op);

    /** In place: every rank ends with root's buffer. */
    Work broadcast(MemorySegment buffer, DataType dtype, int root);

    /**
     * As {@link #allreduce(MemorySegment, DataType, ReduceOp)} on device memory, through the group's
     * {@link #deviceBackend device backend}, in issue order with the group's other calls. It runs after the work
     * already issued on the buffer's stream.
     */
    Work allreduce(CudaBuffer buffer, DataType dtype, ReduceOp op);

    /** As {@link #broadcast(MemorySegment, DataType, int)} on device memory, through the device backend. */
    Work broadcast(CudaBuffer buffer, DataType dtype, int root);

    /** In place on root, which ends with the reduction; other ranks' buffers are left unchanged. */
    Work reduce(MemorySegment buffer, DataType dtype, ReduceOp op, int root);

    /** {@code recv} (size x send) ends with every rank's {@code send} in rank order; send may be recv's own slot. */
    Work allgather(MemorySegment send, MemorySegment recv, DataType dtype);

    /** {@code send} holds size equal blocks; rank r's {@code recv} ends with the reduction of everyone's block r. */
    Work reduceScatter(MemorySegment send, MemorySegment recv, DataType dtype, ReduceOp op);

    /** Completes on a rank only once every rank has issued it. */
    Work barrier();

    /**
     * Sends the buffer to rank {@code dst}, which must issue a matching {@link #recv}. A large send may wait until
     * the receiver takes the data, so two ranks exchanging data should order their send and recv oppositely.
     */
    Work send(MemorySegment buffer, DataType dtype, int dst);

    /** Receives into the buffer what rank {@code src} sends with a matching {@link #send}. */
    Work recv(MemorySegment buffer, DataType dtype, int src);

    /**
     * A new communicator of the given ranks (numbered in this group), for hierarchical schemes. Only the listed
     * ranks call it, all with the same list.
     */
    ProcessGroup subgroup(int... ranks);

    /** A further communicator over the same ranks (one per channel); every rank calls it with the same name. */
    ProcessGroup newGroup(String name, GroupOptions options);

    /**
     * A zeroed buffer of {@code bytes} for collectives that this group runs faster on: where the backend supports it
     * (shm), the memory lives in a segment that every rank maps, so an {@link #allreduce} of the buffer, or of a
     * slice of it, reads and writes the other ranks' copies directly instead of staging through the group's own
     * memory. Other backends return ordinary memory. It is a collective call: every rank registers the same names
     * and sizes in the same order. Valid until the group is closed; any operation works on it as on other buffers.
     */
    MemorySegment registeredBuffer(String name, long bytes);

    /** Releases sockets, shared memory and the progress thread; operations not yet started fail. */
    @Override
    void close();
}
