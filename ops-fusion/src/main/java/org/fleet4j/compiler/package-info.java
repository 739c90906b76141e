/**
 * The compiler: program passes selected and ordered by the effective DistributedStrategy. A {@link Pass} is a pure
 * rewrite, one per file (amp, op fusions, gradient merge, allreduce fusion with {@link GradientBucketer}, fp16 and
 * hierarchical allreduce over a {@link RingLayout}, sync batch norm, optimizer fusion, inplace, overlap), described at
 * its tail by a {@link PassDescription} (name, knobs, when enabled, order) that {@link PassRegistry} finds through
 * ServiceLoader; {@link Pipeline#forStrategy} makes the enabled ones from a {@link PassContext} (knobs read through
 * {@code knob}, ring layout, world) and gives a {@link Compilation} with a {@link PassReport} per pass. It imports
 * fleet-core's {@code ir}, {@code ops} (and {@code .fused}, {@code .collective}), {@code amp}, {@code autodiff},
 * {@code tensor} and strategy's {@code .schema}, {@code .rules}: it runs no program, opens no group.
 */
package org.fleet4j.compiler;
