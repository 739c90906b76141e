package org.fleet4j.gpu;

/**
 * A snapshot of a {@link CachingAllocator}.
 *
 * @param askedBytes    bytes callers asked for and still hold
 * @param usedBytes     the same blocks rounded up to their size classes
 * @param liveBlocks    blocks callers hold
 * @param cachedBytes   freed blocks kept for reuse
 * @param reservedBytes bytes taken from the device (pool, cached and used blocks)
 * @param peakUsedBytes the most {@code usedBytes} has been
 * @param deviceMallocs calls of the device's own allocator
 * @param cacheHits     allocations served from the cache or the pool without a device call
 */
public record AllocatorStats(long askedBytes, long usedBytes, long liveBlocks, long cachedBytes, long reservedBytes,
                             long peakUsedBytes, long deviceMallocs, long cacheHits) {
}
