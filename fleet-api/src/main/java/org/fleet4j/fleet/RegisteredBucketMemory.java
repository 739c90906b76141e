package org.fleet4j.fleet;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.compiler.FuseAllReducePass;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.core.exec.BufferPlacements;
import org.fleet4j.fleet.ops.Rings;

/**
 * Puts the gradient buckets of each flat ring in memory registered with that ring's process group
 * ({@code ProcessGroup.registeredBuffer}): on shared memory the bucket's allreduce then reads and writes the other
 * ranks' buckets directly instead of copying through the group's slots; other backends give ordinary memory. The
 * buckets are allocated by {@code gather_bucket} in the first step, in program order, so every rank registers the same
 * buckets in the same order, as registration requires. FLEET_REGISTERED_BUCKETS=0 turns it off (ordinary memory).
 */
final class RegisteredBucketMemory implements AutoCloseable {
    static final String ENV = "FLEET_REGISTERED_BUCKETS";
    /** Bytes of buckets given registered memory in this JVM, so tests can see that buckets really were placed. */
    private static final AtomicLong GIVEN = new AtomicLong();
    private final List<BufferPlacements.Registration> registrations = new ArrayList<>();

    private RegisteredBucketMemory() {
    }

    /** Registers the placement of every flat ring of {@code layout}, or nothing when not {@code enabled}. */
    static RegisteredBucketMemory register(RingLayout layout, boolean enabled) {
        RegisteredBucketMemory memory = new RegisteredBucketMemory();
        if (!enabled) {
            return memory;
        }
        for (int c = 0; c < layout.commNum(); c++) {
            int ring = layout.flat(c);
            memory.registrations.add(BufferPlacements.register(FuseAllReducePass.placement(ring), (name, bytes) -> {
                GIVEN.addAndGet(bytes);
                return Rings.get(ring).registeredBuffer(name, bytes);
            }));
        }
        return memory;
    }

    /** Whether FLEET_REGISTERED_BUCKETS (the value {@code env}) asks for registered buckets; unset means yes. */
    static boolean enabled(String env) {
        if (env == null || env.isBlank() || env.trim().equals("1")) {
            return true;
        }
        if (env.trim().equals("0")) {
            return false;
        }
        throw new IllegalArgumentException("environment variable " + ENV + "='" + env + "' must be 1 (gradient buckets"
                + " in memory registered with their ring, the default) or 0 (ordinary memory)");
    }

    static long bytesGiven() {
        return GIVEN.get();
    }

    @Override
    public void close() {
        registrations.forEach(BufferPlacements.Registration::close);
    }
}
