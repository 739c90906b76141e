/**
 * Export of a forward-only program to ONNX: {@link OnnxExporter} translates an inference model's program into an ONNX
 * model (one or a few nodes per op, parameters as initializers, feeds and fetches as inputs and outputs) and fails
 * naming the first op that has no ONNX form, before anything is built; {@code OnnxGraph} keeps the graph in static
 * single assignment. It imports fleet-core's {@code ir}, {@code ops}, {@code exec} and {@code tensor}, protobuf and the
 * ONNX messages generated into {@code .proto}; ONNX Runtime is a test dependency only.
 */
package org.fleet4j.fleet.onnx;
