package org.fleet4j.gpu;

/** The device had no room for an allocation even after the cache was released; the message gives the figures. */
public final class DeviceOutOfMemoryException extends RuntimeException {
    private final AllocatorStats stats;

    DeviceOutOfMemoryException(String message, AllocatorStats stats) {
        super(message);
        this.stats = stats;
    }

    public AllocatorStats stats() {
        return stats;
    }
}
