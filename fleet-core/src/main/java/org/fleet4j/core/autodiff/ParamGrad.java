package org.fleet4j.core.autodiff;

/** A trainable parameter and the var that holds its gradient after backward. */
public record ParamGrad(String param, String grad) {
}
