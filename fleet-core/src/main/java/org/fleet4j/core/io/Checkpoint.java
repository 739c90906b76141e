package org.fleet4j.core.io;

import org.fleet4j.core.tensor.Tensor;

import java.util.Map;

/** The contents of a checkpoint file: tensors by name in the file's order, and free-form string metadata. */
public record Checkpoint(Map<String, Tensor> tensors, Map<String, String> metadata) {
}
