package org.fleet4j.examples;

import java.nio.file.Path;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Where a training's batches of text windows stand: the persistable var {@value #VAR} of the main program, int64
 * [seed of the windows, batches drawn], which a checkpoint carries like the weights, so that a training resumed from
 * it draws exactly the batches an uninterrupted one would have (the windows of batch k depend only on the seed and
 * k).
 */
final class WindowPosition {
    static final String VAR = "@TEXT_WINDOWS@";

    private WindowPosition() {
    }

    /** Adds the var to {@code main}, initialised by {@code startup}; call before the optimizer's minimize. */
    static void declare(Program main, Program startup) {
        new Layers(main, startup).createPersistable(VAR, DType.I64, new long[]{2}, 0f);
    }

    /** A fresh training: windows of {@code seed}, none drawn. */
    static void start(Scope scope, long seed) {
        scope.put(VAR, Tensor.ofLongs(new long[]{seed, 0}, 2));
    }

    /** After {@code drawn} batches. */
    static void record(Scope scope, long seed, long drawn) {
        Tensor t = scope.get(VAR);
        t.setLong(0, seed);
        t.setLong(1, drawn);
    }

    /** The batches drawn before {@code checkpoint} was saved; refuses one whose windows came from another seed. */
    static long drawn(Scope scope, long seed, Path checkpoint) {
        Tensor t = scope.get(VAR);
        long saved = t.getLong(0);
        long drawn = t.getLong(1);
        if (saved != seed) {
            throw new IllegalArgumentException("checkpoint " + checkpoint + " drew its training windows with --seed "
                    + saved + "; resume it with --seed " + saved + " to continue the same batches");
        }
        if (drawn < 0) {
            throw new IllegalArgumentException("checkpoint " + checkpoint + " says " + drawn + " batches were drawn;"
                    + " it is damaged");
        }
        return drawn;
    }
}
