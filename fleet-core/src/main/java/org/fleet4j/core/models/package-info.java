/**
 * Models built with the layers API that programs and tests share: {@link Mlp}, a multi-layer perceptron classifier with
 * its loss and accuracy (the model of mnist and mlp_perf, and of the CPU and GPU tests that need a real training
 * program). It imports {@code core.ir}, {@code core.layers} and {@code core.tensor}.
 */
package org.fleet4j.core.models;
