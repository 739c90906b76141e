package org.fleet4j.core.layers;

/**
 * What a layer's caller decides about one of its parameters (Paddle's {@code ParamAttr}): its name, its initializer
 * and whether the optimizer trains it. A null name or initializer keeps the layer's default (see {@link Layers}).
 * <pre>
 * nn.fc(x, 10, null, ParamAttr.named("head.weight").frozen(), ParamAttr.named("head.bias"));
 * </pre>
 */
public record ParamAttr(String name, Initializer initializer, boolean trainable) {
    /** The layer's defaults: default name, default initializer, trained. */
    public static final ParamAttr DEFAULT = new ParamAttr(null, null, true);

    public ParamAttr {
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("a parameter name must not be blank; pass null for the default name");
        }
    }

    public static ParamAttr named(String name) {
        return new ParamAttr(name, null, true);
    }

    public static ParamAttr initializedBy(Initializer initializer) {
        return new ParamAttr(null, initializer, true);
    }

    public ParamAttr withInitializer(Initializer init) {
        return new ParamAttr(name, init, trainable);
    }

    /** This parameter kept at its initial (or loaded) values: no gradient, no update. */
    public ParamAttr frozen() {
        return new ParamAttr(name, initializer, false);
    }
}
