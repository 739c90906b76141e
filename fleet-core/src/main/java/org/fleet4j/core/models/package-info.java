/**
 * Models built with the layers API that programs and tests share: {@link Mlp}, a multi-layer perceptron classifier with
 * its loss and accuracy (the model of mnist and mlp_perf, and of the CPU and GPU tests that need a real training
 * program), and nanoGPT's character-level GPT ({@link GptModel} of a {@link GptConfig}, with {@link GptSampler}, which
 * draws text from it on a {@code ProgramRunner}). It imports {@code core.ir}, {@code core.layers}, {@code core.tensor},
 * {@code core.exec}'s Scope and {@code core.device}'s ProgramRunner.
 */
package org.fleet4j.core.models;
