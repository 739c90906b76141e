/**
 * Automatic mixed precision's settings and rules, as Paddle's: {@link AmpConfig} (the strategy's amp_configs, with
 * Paddle's names and defaults), {@link AmpDtype} (fp16 or bf16), {@link AmpOpLists} (which ops compute in reduced
 * precision, which stay fp32, which follow their inputs) and {@link LossScaleRule}, the one rule by which the loss
 * scale moves, which the {@code update_loss_scaling} kernel and the host-side {@link LossScaler} both follow. It
 * imports only {@code core.tensor}: the compiler's AmpPass makes an AmpConfig from the strategy, and the cast and
 * loss-scaling ops live in {@code core.ops} ({@code CastOps}).
 */
package org.fleet4j.core.amp;
