/**
 * Reverse-mode autodiff on the program: {@link Backward} (Paddle's append_backward) appends, in reverse order, the
 * {@code <type>_grad} op of every op between the parameters and the loss, and sums the gradients of a var used several
 * times with a {@code sum} op; {@link ParamGrad} pairs a trainable parameter with the var of its gradient. It imports
 * {@code core.ir}, {@code core.ops} (the op specs, which know their gradient ops) and {@code core.tensor}; it edits
 * programs and runs nothing.
 */
package org.fleet4j.core.autodiff;
