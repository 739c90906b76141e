package org.fleet4j.launch;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Stops processes and everything they started: TERM, a grace period, then KILL. */
final class ProcessTrees {
    private ProcessTrees() {
    }

    /**
     * Terminates {@code roots} and their descendants; returns the processes still alive after the
     * KILL wait (normally none).
     */
    static List<ProcessHandle> terminate(Collection<ProcessHandle> roots, Duration grace, Duration killWait) {
        Set<ProcessHandle> all = withDescendants(roots);
        all.forEach(ProcessHandle::destroy);
        awaitExit(all, grace);
        // Snapshot again: a process may have started children while it was shutting down.
        Set<ProcessHandle> left = withDescendants(all.stream().filter(ProcessHandle::isAlive).toList());
        left.forEach(ProcessHandle::destroyForcibly);
        awaitExit(left, killWait);
        return left.stream().filter(ProcessHandle::isAlive).toList();
    }

    /**
     * The live processes together with every descendant they have now, from one snapshot of the process table (a
     * snapshot per root made stopping hundreds of ranks take many seconds).
     */
    static Set<ProcessHandle> withDescendants(Collection<ProcessHandle> roots) {
        Map<Long, List<ProcessHandle>> children = new HashMap<>();
        ProcessHandle.allProcesses().forEach(process -> process.parent()
                .ifPresent(parent -> children.computeIfAbsent(parent.pid(), pid -> new ArrayList<>()).add(process)));
        Set<ProcessHandle> all = new LinkedHashSet<>();
        Deque<ProcessHandle> toVisit = new ArrayDeque<>(roots.stream().filter(ProcessHandle::isAlive).toList());
        while (!toVisit.isEmpty()) {
            ProcessHandle process = toVisit.poll();
            if (all.add(process)) {
                toVisit.addAll(children.getOrDefault(process.pid(), List.of()));
            }
        }
        return all;
    }

    /** Waits until every process has exited or the time is up; true when all have. */
    static boolean awaitExit(Collection<ProcessHandle> processes, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (ProcessHandle process : processes) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return processes.stream().noneMatch(ProcessHandle::isAlive);
            }
            try {
                process.onExit().get(left, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                // onExit never completes exceptionally; treat it as gone
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
