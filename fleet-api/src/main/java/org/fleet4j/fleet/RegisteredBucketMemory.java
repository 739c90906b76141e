package org.fleet4j.fleet;

import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.compiler.FuseAllReducePass;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.text.Quoted;

/**
 * Puts the gradient buckets of each flat ring in memory registered with that ring's process group
 * ({@code ProcessGroup.registeredBuffer}): on shared memory the bucket's allreduce then reads and writes the other
 * ranks' buckets directly instead of copying through the group's slots; other backends give ordinary memory. The
 * buckets are allocated by {@code gather_bucket} in the first step, in program order, so every rank registers the same
 * buckets in the same order, as registration requires. FLEET_REGISTERED_BUCKETS=0 turns it off (ordinary memory).
 */
final class RegisteredBucketMemory {
    static final String ENV = "FLEET_REGISTERED_BUCKETS";
    /** Bytes of buckets given registered memory for this job, so tests can see that buckets really were placed. */
    private final AtomicLong given = new AtomicLong();

    /**
     * Gives {@code context} the placement of every flat ring of {@code layout}, whose groups {@code rings} holds, or
     * nothing when not {@code enabled}.
     */
    void addTo(ExecContext.Builder context, RingLayout layout, OpenRings rings, boolean enabled) {
        if (!enabled) {
            return;
        }
        for (int c = 0; c < layout.commNum(); c++) {
            ProcessGroup group = rings.group(layout.flat(c));
            context.placement(FuseAllReducePass.placement(layout.flat(c)), (name, bytes) -> {
                given.addAndGet(bytes);
                return group.registeredBuffer(name, bytes);
            });
        }
    }

    /** Whether FLEET_REGISTERED_BUCKETS (the value {@code env}) asks for registered buckets; unset means yes. */
    static boolean enabled(String env) {
        if (env == null || env.isBlank() || env.trim().equals("1")) {
            return true;
        }
        if (env.trim().equals("0")) {
            return false;
        }
        throw new IllegalArgumentException("environment variable " + ENV + "=" + Quoted.of(env) + " must be 1 (gradient buckets"
                + " in memory registered with their ring, the default) or 0 (ordinary memory)");
    }

    long bytesGiven() {
        return given.get();
    }
}
