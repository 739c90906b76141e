package org.fleet4j.core.ops;

/** Build-time shape and dtype inference of an op's outputs from its inputs and attributes. */
@FunctionalInterface
public interface ShapeFn {
    void infer(InferContext ctx);
}
