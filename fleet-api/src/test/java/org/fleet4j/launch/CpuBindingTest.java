package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CpuBindingTest {
    private static final Optional<Path> NO_TASKSET = Optional.empty();

    @Test
    void cpuListsParseAndPrintLikeTheKernelWritesThem() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), CpuBinding.parseList(" 0-3,8,10-11\n"));
        assertEquals(List.of(5), CpuBinding.parseList("5"));
        assertEquals("0-3,8,10-11", CpuBinding.list(List.of(0, 1, 2, 3, 8, 10, 11)));
        assertEquals("4", CpuBinding.list(List.of(4)));
        assertEquals("CPU list '0-x': '0-x' is not a number or range",
                assertThrows(IllegalArgumentException.class, () -> CpuBinding.parseList("0-x")).getMessage());
        assertEquals("CPU range '3-1' in '3-1'", assertThrows(IllegalArgumentException.class, () -> CpuBinding.parseList("3-1")).getMessage());
    }

    @Test
    void theLaunchersOwnCpusAreKnown() {
        List<Integer> cpus = CpuBinding.allowedCpus();
        assertFalse(cpus.isEmpty());
        assertEquals(Runtime.getRuntime().availableProcessors(), cpus.size(), "the JVM counts the same CPUs: " + cpus);
    }

    @Test
    void withoutTasksetAutoLeavesRanksFreeAndCoresRefuses() {
        CpuBinding auto = CpuBinding.plan(CpuBinding.Mode.AUTO, 2, List.of(0, 1), NO_TASKSET);
        assertFalse(auto.bound());
        assertEquals(List.of(), auto.prefix(0));
        assertEquals("not bound to CPUs (no taskset on PATH (Debian's util-linux provides it))", auto.note());
        assertEquals("--cpu_bind cores: cannot bind the ranks to CPUs: no taskset on PATH (Debian's util-linux provides it)",
                assertThrows(LaunchException.class, () -> CpuBinding.plan(CpuBinding.Mode.CORES, 2, List.of(0, 1), NO_TASKSET))
                        .getMessage());
    }

    @Test
    void ranksGetEqualDisjointSlicesInCpuOrder() {
        Optional<Path> taskset = Optional.of(Path.of("/usr/bin/taskset"));
        org.junit.jupiter.api.Assumptions.assumeTrue(taskset.get().toFile().canExecute(), "no /usr/bin/taskset here");
        // the slices are computed from the given list; taskset is tried on the first slice, which must exist here
        List<Integer> here = CpuBinding.allowedCpus();
        CpuBinding two = CpuBinding.plan(CpuBinding.Mode.AUTO, 1, here, taskset);
        assertEquals(List.of(CpuBinding.list(here)), two.slices());
        assertEquals(List.of("/usr/bin/taskset", "-c", CpuBinding.list(here)), two.prefix(0));
        assertTrue(two.note().startsWith("ranks bound to CPUs "), two.note());
        assertEquals(List.of("0-1", "2-3"), CpuBinding.plan(CpuBinding.Mode.AUTO, 2, List.of(0, 1, 2, 3), taskset).slices());
        assertEquals(List.of("0", "1", "2-3"), CpuBinding.plan(CpuBinding.Mode.AUTO, 3, List.of(0, 1, 2, 3), taskset).slices());
        assertEquals(List.of("0,2", "4,6"), CpuBinding.plan(CpuBinding.Mode.CORES, 2, List.of(0, 2, 4, 6), taskset).slices());
        CpuBinding tooMany = CpuBinding.plan(CpuBinding.Mode.AUTO, here.size() + 1, here, taskset);
        assertFalse(tooMany.bound(), tooMany.note());
        assertTrue(tooMany.note().contains("binding needs at least one CPU per rank"), tooMany.note());
    }
}
