/**
 * Tensors: {@link Tensor}, dense and row-major, with off-heap storage (a 64-byte aligned {@code MemorySegment}) that
 * kernels, BLAS, shared-memory collectives and network sends touch without copies, and views over it; {@link DType};
 * {@link OffHeapMemory}, which allocates it against the direct-memory limit and turns a refusal into an
 * {@link OffHeapMemoryException} that says how to raise the limit; {@link BFloat16}, {@link Shapes} and {@link Bytes}.
 * The bottom of fleet-core: it imports nothing of Fleet4J.
 */
package org.fleet4j.core.tensor;
