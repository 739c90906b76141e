/**
 * The fused ops the compiler's passes insert (fused add+activation, fused batch norm+activation, relu fused into a
 * depthwise convolution, fused optimizers, gradient buckets, bfloat16 allreduce casts, sync batch norm): their
 * definitions and CPU kernels, whose inner loops ({@code VectorLoops}, and for the convolution core.ops's own loops)
 * do the float operations of the single ops in the same order, so fused and unfused programs agree bit for bit. It
 * imports {@code core.ir}, {@code core.ops} and {@code core.tensor} only. The passes in {@code org.fleet4j.compiler}
 * name these ops; nothing here names a pass.
 */
package org.fleet4j.core.ops.fused;
