package org.fleet4j.core.ops;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.fleet4j.collective.ProcessGroup;

/**
 * What a job gives the kernels of the programs it runs, handed to each kernel when it is created
 * ({@link KernelFactory#create}): the process group of each ring id, the allocators of buffer placements, and the
 * services a job adds (parameter-server clients), looked up by type. Nothing of it is process-wide, so two jobs, or
 * the two ranks of a test, run side by side in one JVM, each with its own context.
 */
public final class ExecContext {
    private static final String NO_JOB_HINT = "the executor was made without the context of a job; make it with the"
            + " job's context (Fleet.execContext(), e.g. through ExecutionSettings.executor(fleet))";
    private static final ExecContext NONE = builder().build();

    private final Map<Integer, ProcessGroup> rings;
    private final Map<Integer, String> notMember;
    private final Map<String, BufferPlacements.Allocator> allocators;
    private final BufferPlacements placements;
    private final Map<Class<?>, Object> services;
    private final String missingRingHint;

    private ExecContext(Builder b) {
        this.rings = Map.copyOf(b.rings);
        this.notMember = Map.copyOf(b.notMember);
        this.allocators = Map.copyOf(b.allocators);
        this.placements = BufferPlacements.of(allocators);
        this.services = Map.copyOf(b.services);
        this.missingRingHint = b.missingRingHint;
    }

    /** No rings, no placements, no services: what programs without collective ops run with. */
    public static ExecContext none() {
        return NONE;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from this context's rings, placements and services, to make one with more. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.rings.putAll(rings);
        b.notMember.putAll(notMember);
        b.allocators.putAll(allocators);
        b.services.putAll(services);
        b.missingRingHint = missingRingHint;
        return b;
    }

    /**
     * The group at ring {@code ringId}. Fails naming the ring when this rank is not a member of it, or when the
     * context has no such ring.
     */
    public ProcessGroup ring(int ringId) {
        ProcessGroup group = rings.get(ringId);
        if (group == null) {
            String what = notMember.get(ringId);
            if (what != null) {
                throw new IllegalStateException("this rank is not a member of ring_id " + ringId + " (" + what
                        + "); only its members run collectives on it");
            }
            TreeSet<Integer> ids = new TreeSet<>(rings.keySet());
            ids.addAll(notMember.keySet());
            throw new IllegalStateException("no process group at ring_id " + ringId + " (rings: " + ids + "); "
                    + missingRingHint);
        }
        return group;
    }

    /** Whether this rank takes part in ring {@code ringId}; fails as {@link #ring} for a ring the context lacks. */
    public boolean isMember(int ringId) {
        if (notMember.containsKey(ringId)) {
            return false;
        }
        ring(ringId);
        return true;
    }

    /** The group at ring {@code ringId} when this rank is a member of it, else empty (not a member, no such ring). */
    public Optional<ProcessGroup> memberRing(int ringId) {
        return Optional.ofNullable(rings.get(ringId));
    }

    public BufferPlacements placements() {
        return placements;
    }

    /** The service of {@code type} that the job added, if any. */
    public <T> Optional<T> service(Class<T> type) {
        return Optional.ofNullable(type.cast(services.get(type)));
    }

    /** Fluent construction of a context. */
    public static final class Builder {
        private final Map<Integer, ProcessGroup> rings = new LinkedHashMap<>();
        private final Map<Integer, String> notMember = new LinkedHashMap<>();
        private final Map<String, BufferPlacements.Allocator> allocators = new LinkedHashMap<>();
        private final Map<Class<?>, Object> services = new LinkedHashMap<>();
        private String missingRingHint = NO_JOB_HINT;

        private Builder() {
        }

        /** The group of ring {@code ringId}; a ring id is given once. */
        public Builder ring(int ringId, ProcessGroup group) {
            if (group == null) {
                throw new IllegalArgumentException("ring_id " + ringId + ": a ring needs a group (got null)");
            }
            checkFree(ringId);
            rings.put(ringId, group);
            return this;
        }

        /** Records that this rank is not a member of ring {@code ringId}, which {@code what} describes (its ranks). */
        public Builder notMember(int ringId, String what) {
            checkFree(ringId);
            notMember.put(ringId, what);
            return this;
        }

        private void checkFree(int ringId) {
            if (rings.containsKey(ringId) || notMember.containsKey(ringId)) {
                throw new IllegalArgumentException("ring_id " + ringId + " is given twice to one execution context");
            }
        }

        /** The allocator of buffers placed at {@code placement}. */
        public Builder placement(String placement, BufferPlacements.Allocator allocator) {
            allocators.put(placement, allocator);
            return this;
        }

        /** A service of the job, found by kernels through {@link ExecContext#service}. */
        public <T> Builder service(Class<T> type, T service) {
            services.put(type, type.cast(service));
            return this;
        }

        /** What the error for a ring the context lacks tells the user to do. */
        public Builder missingRingHint(String hint) {
            this.missingRingHint = hint;
            return this;
        }

        public ExecContext build() {
            return new ExecContext(this);
        }
    }
}
