package org.fleet4j.core.exec;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * Where a kernel's long-lived buffer should live when ordinary memory is not the best place: a placement is a name
 * (e.g. {@code ring:0}, chosen by a compiler pass and carried as an op attribute) that code outside fleet-core gives
 * an allocator for. Fleet gives the gradient buckets of each ring memory registered with that ring's process group,
 * which the shared-memory backend reduces without copies. A placement nobody registered, or none at all, means
 * ordinary memory, so a compiled program runs anywhere. The executor never recycles placed memory
 * (num_iteration_per_drop_scope): it belongs to its allocator, not to the garbage collector.
 */
public final class BufferPlacements {
    /** Provides {@code bytes} of zeroed memory for the buffer {@code name}, aligned for any dtype. */
    @FunctionalInterface
    public interface Allocator {
        MemorySegment allocate(String name, long bytes);
    }

    /** Removes its allocator again (and forgets the memory it gave), if it is still the one registered. */
    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    private record Entry(Allocator allocator, List<MemorySegment> given) {
    }

    private static final Map<String, Entry> ENTRIES = new ConcurrentHashMap<>();

    private BufferPlacements() {
    }

    /** Makes {@code allocator} provide the buffers placed at {@code placement}, replacing any earlier one. */
    public static Registration register(String placement, Allocator allocator) {
        if (placement == null || placement.isBlank() || allocator == null) {
            throw new IllegalArgumentException("a buffer placement needs a non-empty name and an allocator (placement '"
                    + placement + "', allocator " + allocator + ")");
        }
        Entry entry = new Entry(allocator, new ArrayList<>());
        ENTRIES.put(placement, entry);
        return () -> ENTRIES.remove(placement, entry);
    }

    /**
     * A zeroed tensor for the buffer {@code name} at {@code placement}: from its allocator if one is registered,
     * else ordinary memory ({@link Tensor#zeros}); an empty placement is ordinary memory.
     */
    public static Tensor zeros(String placement, String name, DType dtype, long... shape) {
        Entry entry = placement == null || placement.isEmpty() ? null : ENTRIES.get(placement);
        if (entry == null) {
            return Tensor.zeros(dtype, shape);
        }
        long bytes = Shapes.numel(shape) * dtype.byteSize();
        MemorySegment memory;
        try {
            memory = entry.allocator().allocate(name, bytes);
        } catch (OutOfMemoryError e) {
            throw OffHeapMemory.refused("buffer '" + name + "' at placement '" + placement + "'", bytes, e);
        }
        if (memory.byteSize() != bytes || memory.address() % Tensor.ALIGNMENT != 0) {
            throw new IllegalStateException("the allocator of placement '" + placement + "' gave buffer '" + name + "' "
                    + memory.byteSize() + " bytes at address " + memory.address() + "; expected " + bytes
                    + " bytes aligned to " + Tensor.ALIGNMENT);
        }
        synchronized (entry.given()) {
            entry.given().add(memory);
        }
        return Tensor.wrap(dtype, memory, shape);
    }

    /** Whether {@code t}'s bytes lie in memory that a registered placement's allocator gave. */
    public static boolean holds(Tensor t) {
        long start = t.segment().address();
        long end = start + t.byteSize();
        for (Entry e : ENTRIES.values()) {
            synchronized (e.given()) {
                for (MemorySegment m : e.given()) {
                    if (start >= m.address() && end <= m.address() + m.byteSize() && t.byteSize() > 0) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
