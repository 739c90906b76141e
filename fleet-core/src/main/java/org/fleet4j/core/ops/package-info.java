/**
 * Op definitions and their CPU kernels. An {@link OpSpec} per op type (slots, {@link AttrDef}s, a {@link ShapeFn} over
 * an {@link InferContext}, a {@link KernelFactory}, the gradient op), registered in the {@link OpRegistry} by the
 * {@link OpLibrary}s found through ServiceLoader; {@link SpecChecker} is the IR's op checker. The built-in families
 * live here (elementwise, activations, matmul, batch norm, losses, casts, control, optimizers, ...), with what kernels
 * share: {@link KernelArgs}, {@link F32}, {@link UpdateRules} (the parameter servers' too), {@link SelectedRows}. A
 * kernel gets everything job-specific (ring groups, buffer placements, services) from the {@link ExecContext} it is
 * made with; the registry holds definitions only, nothing of a job. It imports {@code core.ir}, {@code core.tensor},
 * {@code core.amp}, {@code core.blas} and {@code org.fleet4j.collective} (ProcessGroup) only.
 */
package org.fleet4j.core.ops;
