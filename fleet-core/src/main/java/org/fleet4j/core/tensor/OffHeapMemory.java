package org.fleet4j.core.tensor;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.Supplier;

/**
 * Where tensor memory comes from: zeroed off-heap segments counted against the JVM's direct-memory limit
 * ({@code -XX:MaxDirectMemorySize}, by default the heap's maximum size), freed by the garbage collector. An allocation
 * the limit or the operating system refuses becomes an {@link OffHeapMemoryException} that says how much was asked,
 * what the limit is and how to raise it, instead of an {@link OutOfMemoryError}.
 */
public final class OffHeapMemory {
    /** The JVM flag that sets the limit. */
    public static final String LIMIT_FLAG = "-XX:MaxDirectMemorySize";

    private OffHeapMemory() {
    }

    /**
     * {@code bytes} of zeroed memory aligned to {@code alignment}; {@code what} names it should the allocation fail
     * (built only then: tensors are allocated on the executor's path).
     */
    public static MemorySegment allocate(long bytes, long alignment, Supplier<String> what) {
        try {
            return Arena.ofAuto().allocate(Math.max(bytes, 1), alignment).asSlice(0, bytes);
        } catch (OutOfMemoryError e) {
            // thrown before any memory is taken (the reservation or malloc failed), so nothing needs undoing
            throw refused(what.get(), bytes, e);
        }
    }

    /** The failure to report when an allocator outside this class could not give {@code bytes} for {@code what}. */
    public static OffHeapMemoryException refused(String what, long bytes, OutOfMemoryError cause) {
        return new OffHeapMemoryException(what, bytes, limit(), inUse(), physical(), cause);
    }

    /** The JVM's direct-memory limit in bytes. */
    public static long limit() {
        try {
            long flag = Long.parseLong(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .getVMOption("MaxDirectMemorySize").getValue());
            if (flag > 0) {
                return flag;
            }
        } catch (RuntimeException e) {
            // not HotSpot, or the flag is unknown: the JDK's default applies
        }
        return Runtime.getRuntime().maxMemory();
    }

    /** Bytes of direct memory in use now (tensors, direct buffers). */
    public static long inUse() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        return -1;
    }

    /** The machine's memory in bytes, or -1 when the JVM does not say. */
    static long physical() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getTotalMemorySize() : -1;
    }
}
