package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a CPU rank is counted as taking, and the refusal of ranks that cannot fit, against a meminfo file of our own. */
class RankMemoryTest {
    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    @TempDir
    Path work;

    @Test
    void rankMemoryComesFromItsJvmFlags() {
        assertEquals(new RankMemory(384 * MIB, "the JVM's initial heap, 1/64 of 24.0 GiB RAM; no -Xmx", 0, "not limited"),
                RankMemory.of(List.of(), 24 * GIB));
        assertEquals(new RankMemory(GIB, "-Xms, no -Xmx", 0, "not limited"), RankMemory.of(List.of("-Xms1g"), 24 * GIB));
        assertEquals(new RankMemory(8 * GIB, "-Xmx", 8 * GIB, "-XX:MaxDirectMemorySize defaults to -Xmx"),
                RankMemory.of(List.of("-Xmx2g", "-XX:+UseZGC", "-XX:MaxHeapSize=8G"), 24 * GIB), "the last flag wins, as in the JVM");
        assertEquals(new RankMemory(512 * MIB, "-Xmx", 2 * GIB, "-XX:MaxDirectMemorySize"),
                RankMemory.of(List.of("-Xmx524288k", "-XX:MaxDirectMemorySize=2147483648"), 24 * GIB));
        assertEquals(384 * MIB + 64 * MIB, RankMemory.of(List.of(), 24 * GIB).perRank());
    }

    /** The report of issue 12: 500 ranks of the default JVM on a 24 GiB machine with 22.4 GiB available. */
    @Test
    void fiveHundredDefaultRanksOnTwentyFourGibAreRefusedWithTheNumbers() throws Exception {
        Path meminfo = Files.writeString(work.resolve("meminfo"),
                "MemTotal:       25165824 kB\nMemFree:         1000000 kB\nMemAvailable:   23488102 kB\n");

        LaunchException refused = assertThrows(LaunchException.class, () -> RankMemory.check(500, List.of(), meminfo));

        assertEquals("500 rank(s) need about 218.8 GiB but this machine has 22.4 GiB available (MemAvailable in " + meminfo
                + "): each rank 448.0 MiB = heap 384.0 MiB (the JVM's initial heap, 1/64 of 24.0 GiB RAM; no -Xmx) + off-heap"
                + " 0 B (not limited) + JVM 64.0 MiB; run at most 51 rank(s) with --nproc_per_node, lower -Xmx or"
                + " -XX:MaxDirectMemorySize in --jvm_args, or pass --skip_memory_check", refused.getMessage());
        RankMemory.check(51, List.of(), meminfo);
        RankMemory.check(500, List.of(), work.resolve("no-meminfo-here"));
    }
}
