package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * Where a kernel's long-lived buffer should live when ordinary memory is not the best place: a placement is a name
 * (e.g. {@code ring:0}, chosen by a compiler pass and carried as an op attribute) that the job gives an allocator for
 * in its {@link ExecContext}. Fleet gives the gradient buckets of each ring memory registered with that ring's process
 * group, which the shared-memory backend reduces without copies. A placement without an allocator, or none at all,
 * means ordinary memory, so a compiled program runs anywhere. The executor never recycles placed memory
 * (num_iteration_per_drop_scope): it belongs to its allocator, not to the garbage collector.
 */
public final class BufferPlacements {
    /** Provides {@code bytes} of zeroed memory for the buffer {@code name}, aligned for any dtype. */
    @FunctionalInterface
    public interface Allocator {
        MemorySegment allocate(String name, long bytes);
    }

    /** No placement has an allocator: every buffer is ordinary memory. */
    public static final BufferPlacements NONE = new BufferPlacements(Map.of());

    private final Map<String, Allocator> allocators;
    /** The memory each allocator gave, so the executor can tell placed memory from its own. */
    private final List<MemorySegment> given = new ArrayList<>();

    private BufferPlacements(Map<String, Allocator> allocators) {
        this.allocators = allocators;
    }

    /** The placements of {@code allocators}, by placement name. */
    public static BufferPlacements of(Map<String, Allocator> allocators) {
        Map<String, Allocator> copy = new LinkedHashMap<>();
        allocators.forEach((placement, allocator) -> {
            if (placement == null || placement.isBlank() || allocator == null) {
                throw new IllegalArgumentException("a buffer placement needs a non-empty name and an allocator"
                        + " (placement '" + placement + "', allocator " + allocator + ")");
            }
            copy.put(placement, allocator);
        });
        return copy.isEmpty() ? NONE : new BufferPlacements(Map.copyOf(copy));
    }

    /**
     * A zeroed tensor for the buffer {@code name} at {@code placement}: from its allocator if it has one, else
     * ordinary memory ({@link Tensor#zeros}); an empty placement is ordinary memory.
     */
    public Tensor zeros(String placement, String name, DType dtype, long... shape) {
        Allocator allocator = placement == null || placement.isEmpty() ? null : allocators.get(placement);
        if (allocator == null) {
            return Tensor.zeros(dtype, shape);
        }
        long bytes = Shapes.numel(shape) * dtype.byteSize();
        MemorySegment memory;
        try {
            memory = allocator.allocate(name, bytes);
        } catch (OutOfMemoryError e) {
            throw OffHeapMemory.refused("buffer '" + name + "' at placement '" + placement + "'", bytes, e);
        }
        if (memory.byteSize() != bytes || memory.address() % Tensor.ALIGNMENT != 0) {
            throw new IllegalStateException("the allocator of placement '" + placement + "' gave buffer '" + name + "' "
                    + memory.byteSize() + " bytes at address " + memory.address() + "; expected " + bytes
                    + " bytes aligned to " + Tensor.ALIGNMENT);
        }
        synchronized (given) {
            given.add(memory);
        }
        return Tensor.wrap(dtype, memory, shape);
    }

    /** Whether {@code t}'s bytes lie in memory that one of these placements' allocators gave. */
    public boolean holds(Tensor t) {
        if (allocators.isEmpty() || t.byteSize() == 0) {
            return false;
        }
        long start = t.segment().address();
        long end = start + t.byteSize();
        synchronized (given) {
            for (MemorySegment m : given) {
                if (start >= m.address() && end <= m.address() + m.byteSize()) {
                    return true;
                }
            }
        }
        return false;
    }
}
