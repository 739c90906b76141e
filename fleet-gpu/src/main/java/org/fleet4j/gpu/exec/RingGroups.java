package org.fleet4j.gpu.exec;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.gpu.GpuDevice;

/**
 * The process group that the GPU executor's {@code c_allreduce} and {@code c_broadcast} of each ring run on, on device
 * memory. A group attached by hand wins. Otherwise, with {@code FLEET_GPU_COLLECTIVES=nccl} (the default for programs
 * run through {@code ProgramRunners}), it is the host group that the job's {@link ExecContext} holds for that ring (the rings
 * {@code Fleet.init} opened) itself: the first collective op of a ring opens that group's device backend (NCCL, its unique id through the group's
 * rendezvous store), which then runs the ring's collectives on device buffers. Every rank prepares the same programs in
 * the same op order, so every member of a ring opens its communicator at the same point. A ring this rank is not a
 * member of, or that the context lacks, gets no group: its ops take the host path, whose CPU kernel skips or names the
 * ring. A new Fleet (another host group at the ring id) brings its own device backend, closed with it. With
 * {@code FLEET_GPU_COLLECTIVES=host} every ring reduces through its host group (a copy each way).
 */
public final class RingGroups {
    public static final String VARIABLE = "FLEET_GPU_COLLECTIVES";

    /** Where the collectives of a ring with no attached group run. */
    public enum Mode {
        /** On device buffers, through an NCCL communicator per ring. */
        NCCL,
        /** Through the ring's host process group, copying each tensor to the host and back. */
        HOST;

        /** The mode a value of {@link #VARIABLE} names; unset or empty means NCCL. */
        public static Mode parse(String value) {
            if (value == null || value.isBlank()) {
                return NCCL;
            }
            return switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "nccl" -> NCCL;
                case "host" -> HOST;
                default -> throw new IllegalArgumentException(VARIABLE + "='" + value + "': expected 'nccl' (collectives"
                        + " on the GPU through NCCL, the default) or 'host' (through the ring's host process group)");
            };
        }
    }

    private final Mode mode;
    private final IntFunction<ProcessGroup> hostRing;
    private final Consumer<ProcessGroup> openDevice;
    private final Map<Integer, ProcessGroup> attached = new HashMap<>();

    /**
     * @param hostRing the host group of a ring id, or null where this rank has none (not a member, no ring)
     * @param openDevice opens a host group's device backend (collective: every member calls it); idempotent
     */
    RingGroups(Mode mode, IntFunction<ProcessGroup> hostRing, Consumer<ProcessGroup> openDevice) {
        this.mode = mode;
        this.hostRing = hostRing;
        this.openDevice = openDevice;
    }

    /** No group but those attached by hand: what a {@code GpuExecutor} made directly starts with. */
    static RingGroups attachedOnly() {
        return new RingGroups(Mode.HOST, ring -> null, host -> {
            throw new IllegalStateException("host mode opens no device backend");
        });
    }

    /** The mode of {@link #VARIABLE}, over the rings of {@code context}, their device backends on {@code gpu}. */
    static RingGroups fromEnvironment(GpuDevice gpu, ExecContext context) {
        return new RingGroups(Mode.parse(System.getenv(VARIABLE)), ring -> hostRing(context, ring),
                host -> host.deviceBackend(gpu.ordinal()));
    }

    /**
     * The host group of {@code ringId} in {@code context} when this rank is a member, else null: for a ring the context
     * lacks, the host path's CPU kernel says so, naming the ring.
     */
    static ProcessGroup hostRing(ExecContext context, int ringId) {
        return context.memberRing(ringId).orElse(null);
    }

    public Mode mode() {
        return mode;
    }

    void attach(int ringId, ProcessGroup group) {
        attached.put(ringId, group);
    }

    /** The group of a ring, its device backend opened on first use in NCCL mode; null: the host path. */
    ProcessGroup groupFor(int ringId) {
        ProcessGroup a = attached.get(ringId);
        if (a != null || mode == Mode.HOST) {
            return a;
        }
        ProcessGroup host = hostRing.apply(ringId);
        if (host == null) {
            return null;
        }
        try {
            openDevice.accept(host);
        } catch (RuntimeException e) {
            throw new ExecutionException("ring_id " + ringId + ": " + e.getMessage() + ". Set " + VARIABLE
                    + "=host to reduce through the host group instead", e);
        }
        return host;
    }
}
