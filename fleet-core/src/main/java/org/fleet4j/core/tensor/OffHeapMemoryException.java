package org.fleet4j.core.tensor;

/**
 * Off-heap memory that could not be allocated. The message names what was being allocated (callers that know more,
 * such as the op and the var, add it with {@link #in}), the bytes asked, the limit and how to raise it.
 */
public final class OffHeapMemoryException extends RuntimeException {
    private static final long GIB = 1L << 30;

    private final String context;
    private final String what;
    private final long bytes;
    private final long limit;
    private final long inUse;
    private final long physical;

    OffHeapMemoryException(String what, long bytes, long limit, long inUse, long physical, OutOfMemoryError cause) {
        this(null, what, bytes, limit, inUse, physical, cause);
    }

    private OffHeapMemoryException(String context, String what, long bytes, long limit, long inUse, long physical,
                                   Throwable cause) {
        super(message(context, what, bytes, limit, inUse, physical), cause);
        this.context = context;
        this.what = what;
        this.bytes = bytes;
        this.limit = limit;
        this.inUse = inUse;
        this.physical = physical;
    }

    /** The same failure with {@code where} (e.g. {@code "op #3 mul"}, {@code "output 'fc_0.tmp_0'"}) in front. */
    public OffHeapMemoryException in(String where) {
        return new OffHeapMemoryException(context == null ? where : where + ", " + context, what, bytes, limit, inUse,
                physical, getCause());
    }

    /** Bytes asked. */
    public long bytes() {
        return bytes;
    }

    /** The JVM's direct-memory limit when the allocation failed. */
    public long limit() {
        return limit;
    }

    private static String message(String context, String what, long bytes, long limit, long inUse, long physical) {
        StringBuilder m = new StringBuilder();
        if (context != null) {
            m.append(context).append(": ");
        }
        m.append("cannot allocate ").append(Bytes.format(bytes)).append(" (").append(bytes).append(" bytes) for ")
                .append(what).append(": ");
        long needed = Math.max(inUse, 0) + bytes;
        if (needed <= limit) {
            return m.append("the operating system refused it (").append(Bytes.format(Math.max(inUse, 0)))
                    .append(" of the off-heap limit of ").append(Bytes.format(limit)).append(" in use); ask for less,")
                    .append(" or free memory on this machine").toString();
        }
        m.append("the off-heap limit is ").append(Bytes.format(limit)).append(" (").append(limit).append(" bytes)");
        if (inUse >= 0) {
            m.append(", ").append(Bytes.format(inUse)).append(" in use");
        }
        if (physical > 0 && needed > physical) {
            m.append("; ").append(OffHeapMemory.LIMIT_FLAG).append(" raises it, but this machine has only ")
                    .append(Bytes.format(physical)).append(" of memory: ask for less (a smaller batch or model)");
        } else {
            // a quarter more than this allocation needs, for what the program allocates next
            String flag = OffHeapMemory.LIMIT_FLAG + "=" + ((needed + needed / 4 + GIB - 1) / GIB) + "g";
            m.append("; raise the limit with ").append(flag).append(" (bin/fleetrun --jvm_args \"").append(flag)
                    .append("\") or ask for less");
        }
        return m.toString();
    }
}
