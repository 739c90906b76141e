package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.fleet4j.core.ops.F32;
import org.fleet4j.core.ops.UpdateRules;

/**
 * The update a server applies to a record: a sparse row or a dense block, laid out as floats
 * {@code [value (width) | one slot per name in slots() (width each) | scalars()]}. The arithmetic is
 * {@link UpdateRules}', the worker ops' own, so a server gives the same values as the op on the same gradient.
 * The learning rate is constant on the server.
 */
public sealed interface ServerOptimizer {
    ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** Short name written to checkpoint manifests ("adagrad"). */
    String name();

    /** Per-element state, each as wide as the value. */
    List<String> slots();

    /** Per-record state of one float each. */
    default List<String> scalars() {
        return List.of();
    }

    /** Sets the state of a new, zeroed record. */
    default void initState(MemorySegment record, long width) {
    }

    /** Applies {@code grad} (width floats) to the record. */
    void apply(MemorySegment record, MemorySegment grad, long width);

    /** Floats in a record of this width. */
    default long recordFloats(long width) {
        return width * (1 + slots().size()) + scalars().size();
    }

    static MemorySegment value(MemorySegment record, long width) {
        return record.asSlice(0, width * Float.BYTES);
    }

    static MemorySegment slot(MemorySegment record, long width, int k) {
        return record.asSlice((k + 1) * width * Float.BYTES, width * Float.BYTES);
    }

    /**
     * Geo mode's server: a push is how far a worker's local training moved the value (already divided by the number
     * of workers), and the server adds it; no optimizer state.
     */
    record Delta() implements ServerOptimizer {
        public String name() {
            return "delta";
        }

        public List<String> slots() {
            return List.of();
        }

        public void apply(MemorySegment record, MemorySegment delta, long width) {
            F32.accumulate(record, delta, width);
        }
    }

    record Sgd(float lr, float weightDecay) implements ServerOptimizer {
        public Sgd(float lr) {
            this(lr, 0f);
        }

        public String name() {
            return "sgd";
        }

        public List<String> slots() {
            return List.of();
        }

        public void apply(MemorySegment record, MemorySegment grad, long width) {
            UpdateRules.sgd(record, grad, lr, weightDecay, width);
        }
    }

    record Momentum(float lr, float mu, boolean nesterov, float weightDecay) implements ServerOptimizer {
        public Momentum(float lr, float mu) {
            this(lr, mu, false, 0f);
        }

        public String name() {
            return "momentum";
        }

        public List<String> slots() {
            return List.of("velocity");
        }

        public void apply(MemorySegment record, MemorySegment grad, long width) {
            UpdateRules.momentum(record, slot(record, width, 0), grad, width, lr, mu, nesterov, weightDecay);
        }
    }

    /** Adagrad whose moment starts at {@code initialAccumulator} (see {@link org.fleet4j.core.optim.Adagrad}). */
    record Adagrad(float lr, float epsilon, float initialAccumulator) implements ServerOptimizer {
        public Adagrad(float lr) {
            this(lr, org.fleet4j.core.optim.Adagrad.DEFAULT_EPSILON, 0f);
        }

        public Adagrad(float lr, float epsilon) {
            this(lr, epsilon, 0f);
        }

        @Override
        public void initState(MemorySegment record, long width) {
            if (initialAccumulator != 0f) {
                MemorySegment moment = slot(record, width, 0);
                for (long i = 0; i < width; i++) {
                    moment.setAtIndex(F, i, initialAccumulator);
                }
            }
        }

        public String name() {
            return "adagrad";
        }

        public List<String> slots() {
            return List.of("moment");
        }

        public void apply(MemorySegment record, MemorySegment grad, long width) {
            UpdateRules.adagrad(record, slot(record, width, 0), grad, width, lr, epsilon);
        }
    }

    /** Adam with per-record beta powers: a sparse row is corrected for the number of updates it has had. */
    record Adam(float lr, float beta1, float beta2, float epsilon) implements ServerOptimizer {
        public Adam(float lr) {
            this(lr, 0.9f, 0.999f, 1e-8f);
        }

        public String name() {
            return "adam";
        }

        public List<String> slots() {
            return List.of("moment1", "moment2");
        }

        @Override
        public List<String> scalars() {
            return List.of("beta1_pow", "beta2_pow");
        }

        @Override
        public void initState(MemorySegment record, long width) {
            record.setAtIndex(F, 3 * width, beta1);
            record.setAtIndex(F, 3 * width + 1, beta2);
        }

        public void apply(MemorySegment record, MemorySegment grad, long width) {
            float b1pow = record.getAtIndex(F, 3 * width);
            float b2pow = record.getAtIndex(F, 3 * width + 1);
            UpdateRules.adam(record, slot(record, width, 0), slot(record, width, 1), grad, 0, width, lr,
                    UpdateRules.adamStep(lr, b1pow, b2pow), UpdateRules.adamEpsilon(epsilon, b2pow), beta1, beta2, 0f);
            record.setAtIndex(F, 3 * width, b1pow * beta1);
            record.setAtIndex(F, 3 * width + 1, b2pow * beta2);
        }
    }
}
