/**
 * The collective API that fleet-core's kernels, the backends and the parameter servers share: {@link ProcessGroup}
 * (allreduce, broadcast, reduce, allgather, reduce-scatter, barrier, send and recv on host {@code MemorySegment}s;
 * allreduce and broadcast on a {@link CudaBuffer}; subgroups and registered buffers), the {@link Work} handle each call
 * returns, {@link ReduceOp}, {@link DataType}, {@link GroupOptions}, {@link Backend} names and
 * {@link CollectiveException}. Interfaces and values over the JDK alone: no backend, no rendezvous, no fleet-core type
 * (DataType is not DType), and no CUDA class (a CudaBuffer is a device, an address and a stream).
 */
package org.fleet4j.collective;
