/**
 * The one registry of kernels, keyed by op and device ({@link DeviceKind}). A CPU kernel is the factory of the op's own
 * spec; the kernels of other devices are registered against those specs by the {@link KernelLibrary}s found through
 * ServiceLoader, through a {@link KernelRegistrar}, with host fallbacks declared. {@link KernelRegistry} gives a
 * device's executor its {@link DeviceKernels} and tells the dry run of a GPU world where each op would run
 * ({@link Placement}). It imports {@code core.ir} and {@code core.ops} and names no device library's class (the factory
 * type is a type parameter); registering a library must load no native code.
 */
package org.fleet4j.core.kernel;
