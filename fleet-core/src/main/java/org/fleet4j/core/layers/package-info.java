/**
 * The layers API that builds programs: {@link Layers} appends layer ops (data, fc, embedding, batch_norm, dropout,
 * activations, losses, ...) to a main program and their parameters' initialisation to a startup program, with Paddle's
 * default parameter names; {@link ParamAttr} is the caller's say on one parameter (name, initializer, trainable,
 * regularizer) and {@link Initializer} (constant, uniform, normal, Xavier, Kaiming, given values) the op that
 * initialises it. It imports only {@code core.ir} and {@code core.tensor}; it runs nothing.
 */
package org.fleet4j.core.layers;
