package org.fleet4j.pserver.grpcpp;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * Pins the calling thread to one core through the OS (libc's {@code sched_setaffinity} on the thread's own id, via
 * the FFM API), so the scheduler keeps it there: not a hint. Linux only; elsewhere {@link #available()} is false.
 */
final class CorePinning {
    /** glibc's cpu_set_t: 1,024 CPUs. */
    private static final long CPU_SET_BYTES = 128;
    private static final MethodHandle GETTID;
    private static final MethodHandle SET_AFFINITY;
    private static final MethodHandle GET_AFFINITY;

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        MethodHandle gettid = null;
        MethodHandle set = null;
        MethodHandle get = null;
        if (libc.find("sched_setaffinity").isPresent() && libc.find("gettid").isPresent()) {
            gettid = linker.downcallHandle(libc.find("gettid").orElseThrow(), FunctionDescriptor.of(JAVA_INT));
            FunctionDescriptor affinity = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS);
            set = linker.downcallHandle(libc.find("sched_setaffinity").orElseThrow(), affinity);
            get = linker.downcallHandle(libc.find("sched_getaffinity").orElseThrow(), affinity);
        }
        GETTID = gettid;
        SET_AFFINITY = set;
        GET_AFFINITY = get;
    }

    private CorePinning() {
    }

    static boolean available() {
        return SET_AFFINITY != null;
    }

    /** The calling thread's id in the OS (what /proc/self/task/TID names). */
    static int threadId() {
        try {
            return (int) GETTID.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("gettid failed", e);
        }
    }

    /** The CPUs this process may run on, in order (sched_getaffinity of the calling thread). */
    static List<Integer> allowedCpus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment set = arena.allocate(CPU_SET_BYTES);
            int rc = (int) GET_AFFINITY.invokeExact(0, CPU_SET_BYTES, set);
            if (rc != 0) {
                throw new IllegalStateException("sched_getaffinity returned " + rc);
            }
            List<Integer> cpus = new ArrayList<>();
            for (int cpu = 0; cpu < CPU_SET_BYTES * 8; cpu++) {
                if ((set.get(JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                    cpus.add(cpu);
                }
            }
            return cpus;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("sched_getaffinity failed", e);
        }
    }

    /** Pins the calling thread to {@code cpu}; false (and the thread unpinned) if the OS refused. */
    static boolean pin(int cpu) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment set = arena.allocate(CPU_SET_BYTES);
            set.set(JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            return (int) SET_AFFINITY.invokeExact(0, CPU_SET_BYTES, set) == 0;
        } catch (Throwable e) {
            return false;
        }
    }
}
