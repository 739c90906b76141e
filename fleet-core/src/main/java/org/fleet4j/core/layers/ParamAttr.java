package org.fleet4j.core.layers;

import org.fleet4j.core.ir.Regularizer;

/**
 * What a layer's caller decides about one of its parameters (Paddle's {@code ParamAttr}): its name, its initializer,
 * whether the optimizer trains it, and its weight decay. A null name or initializer keeps the layer's default (see
 * {@link Layers}); a null regularizer adds no decay.
 * <pre>
 * nn.fc(x, 10, null, ParamAttr.named("head.weight").withRegularizer(Regularizer.l2Decay(1e-4f)),
 *         ParamAttr.named("head.bias").frozen());
 * </pre>
 */
public record ParamAttr(String name, Initializer initializer, boolean trainable, Regularizer regularizer) {
    /** The layer's defaults: default name, default initializer, trained, no decay. */
    public static final ParamAttr DEFAULT = new ParamAttr(null, null, true, null);

    public ParamAttr {
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("a parameter name must not be blank; pass null for the default name");
        }
    }

    public static ParamAttr named(String name) {
        return new ParamAttr(name, null, true, null);
    }

    public static ParamAttr initializedBy(Initializer initializer) {
        return new ParamAttr(null, initializer, true, null);
    }

    public ParamAttr withInitializer(Initializer init) {
        return new ParamAttr(name, init, trainable, regularizer);
    }

    /** This parameter decayed by {@code r} (Paddle's {@code ParamAttr(regularizer=L2Decay(c))}). */
    public ParamAttr withRegularizer(Regularizer r) {
        return new ParamAttr(name, initializer, trainable, r);
    }

    /** This parameter kept at its initial (or loaded) values: no gradient, no update. */
    public ParamAttr frozen() {
        return new ParamAttr(name, initializer, false, regularizer);
    }
}
