package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Stopping many process trees at once, as a job of hundreds of ranks needs. */
class ProcessTreesTest {
    /**
     * Issue 12 stopped 439 ranks in 40 s: a snapshot of the process table per root costs roots x processes reads of /proc.
     * With 600 trees that took 14 s on a 2-core machine; one snapshot per round takes well under a second.
     */
    private static final int ROOTS = 600;
    /** What LAUNCHER.md promises for a teardown: TERM, 4 s grace, KILL, 3 s (a parameter-server job first gives its workers 2 s). */
    private static final Duration PROMISED = Duration.ofSeconds(10);

    private final List<Process> roots = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        roots.forEach(root -> {
            root.descendants().forEach(ProcessHandle::destroyForcibly);
            root.destroyForcibly();
        });
    }

    @Test
    void hundredsOfTreesAreStoppedWithinThePromisedTime() throws IOException, InterruptedException {
        for (int i = 0; i < ROOTS; i++) {
            roots.add(new ProcessBuilder("sh", "-c", "sleep 300 & wait").start());
        }
        List<ProcessHandle> handles = roots.stream().map(Process::toHandle).toList();
        Set<Long> rootPids = handles.stream().map(ProcessHandle::pid).collect(Collectors.toSet());
        // Each tree is a shell and its sleep child; wait until every child exists, so the trees are whole.
        List<ProcessHandle> children = List.of();
        long childDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (children.size() < ROOTS) {
            assertTrue(System.nanoTime() < childDeadline, "only " + children.size() + " of the shells started their sleep within 30 s");
            Thread.sleep(10);
            children = ProcessHandle.allProcesses()
                    .filter(process -> process.parent().map(parent -> rootPids.contains(parent.pid())).orElse(false)).toList();
        }
        List<ProcessHandle> trees = new ArrayList<>(handles);
        trees.addAll(children);

        long start = System.nanoTime();
        List<ProcessHandle> survivors = ProcessTrees.terminate(handles, Duration.ofSeconds(4), Duration.ofSeconds(3));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(List.of(), survivors);
        assertTrue(trees.stream().noneMatch(ProcessHandle::isAlive), "a shell or a sleep outlived the teardown");
        assertTrue(took.compareTo(PROMISED) < 0, "stopping " + ROOTS + " trees took " + took + ", more than the promised " + PROMISED);
    }
}
