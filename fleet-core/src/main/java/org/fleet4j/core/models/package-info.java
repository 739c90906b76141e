/**
 * Models built with the layers API that programs and tests share. Classifiers ({@link Classifier}: training, startup
 * and test programs with the vars a loop feeds and fetches): {@link Mlp}, a multi-layer perceptron (mnist, mlp_perf and
 * the CPU and GPU tests that need a real training program), {@link LeNet} (LeNet-5) and {@link ResNet} (a small ResNet
 * of basic blocks, optionally separable), both {@link ConvNet}s of NCHW images with PyTorch's module names. Language
 * models: nanoGPT's character-level GPT ({@link GptModel} of a {@link GptConfig}, with {@link GptSampler}, which draws
 * text from it on a {@code ProgramRunner}). It imports {@code core.ir}, {@code core.layers}, {@code core.tensor},
 * {@code core.exec}'s Scope and {@code core.device}'s ProgramRunner.
 */
package org.fleet4j.core.models;
