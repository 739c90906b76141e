package org.fleet4j.compiler;

import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import org.fleet4j.strategy.schema.KnobUse;

/**
 * A pass's description, written beside its code: a nested {@code Registration} at the tail of the pass's file,
 * registered with {@code @AutoService(PassDescription.class)} and found through {@link java.util.ServiceLoader}, as
 * Paddle's {@code REGISTER_PASS} sits at the tail of each pass. It gives the pass's name, the knobs it reads (its
 * switch first: what the dry run shows as in effect), whether a strategy enables it, its place in the order, and how to
 * make it from a {@link PassContext}. Listing descriptions makes no pass. A user's jar adds a pass the same way.
 * <pre>
 * &#64;AutoService(PassDescription.class)
 * public static final class Registration extends PassDescription {
 *     public Registration() {
 *         super(NAME, 210, List.of(any(BUILD_FUSE_BN_ACT_OPS)), c -&gt; c.knob(BUILD_FUSE_BN_ACT_OPS), c -&gt; new FuseBnActPass());
 *     }
 * }
 * </pre>
 * The orders of the built-in passes, and why, are listed on {@link Pipeline}.
 */
public abstract class PassDescription {
    private final String name;
    private final int order;
    private final List<KnobUse> knobs;
    private final Predicate<PassContext> enabled;
    private final Function<PassContext, Pass> factory;

    protected PassDescription(String name, int order, List<KnobUse> knobs, Predicate<PassContext> enabled,
                              Function<PassContext, Pass> factory) {
        this.name = name;
        this.order = order;
        this.knobs = List.copyOf(knobs);
        this.enabled = enabled;
        this.factory = factory;
    }

    /** The pass's name, that of its strategy switch where it has one ("fuse_bn_act_ops"). */
    public final String name() {
        return name;
    }

    /** Passes run in increasing order. */
    public final int order() {
        return order;
    }

    /** The knobs the pass reads, its switch first. */
    public final List<KnobUse> knobs() {
        return knobs;
    }

    /** Whether the context's strategy selects the pass. */
    public final boolean enabled(PassContext context) {
        return enabled.test(context);
    }

    public final Pass create(PassContext context) {
        return factory.apply(context);
    }

    @Override
    public String toString() {
        return name + " (order " + order + ")";
    }
}
