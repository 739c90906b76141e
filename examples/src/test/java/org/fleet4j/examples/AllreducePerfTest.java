package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.collective.RankProcesses;
import org.fleet4j.collective.group.OpKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AllreducePerfTest {
    @TempDir
    Path logs;

    @Test
    void parsesSizesOpsAndBackends() {
        AllreducePerfArgs a = AllreducePerfArgs.parse(new String[] {"--sizes", "4K,1M,64M,100", "--op", "reduce_scatter", "--backend", "tcp"});
        assertEquals(List.of(4096L, 1L << 20, 64L << 20, 100L), a.sizes());
        assertEquals(OpKind.REDUCE_SCATTER, a.op());
        assertEquals(3.0 / 2, AllreducePerf.busFactor(OpKind.ALLREDUCE, 4));
        assertEquals(0.75, AllreducePerf.busFactor(OpKind.ALLGATHER, 4));
    }

    @Test
    void badArgumentsGiveOneLineMessages() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllreducePerfArgs.parse(new String[] {"--sizes", "4Q"}))
                .getMessage().contains("'4Q'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllreducePerfArgs.parse(new String[] {"--op", "gather"}))
                .getMessage().contains("'gather'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllreducePerfArgs.parse(new String[] {"--bogus"}))
                .getMessage().contains("unknown argument '--bogus'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllreducePerfArgs.parse(new String[] {"--sizes"}))
                .getMessage().contains("needs a value"));
    }

    @Test
    void twoRanksPrintTheTableAndWriteJsonRows() throws Exception {
        try (var ranks = new RankProcesses(2, AllreducePerf.class,
                List.of("--sizes", "4K,256K", "--repeats", "3", "--ms_per_size", "30"), Map.of(), logs)) {
            for (int r = 0; r < 2; r++) {
                assertEquals(0, ranks.exitCode(r, Duration.ofSeconds(120)), ranks.log(r));
            }
            String table = ranks.log(0);
            assertTrue(table.contains("busbw(GB/s)") && table.contains("backend shm"), table);
            String json = Files.readString(logs.resolve("allreduce_perf.json"));
            Matcher m = Pattern.compile("\\{\"bytes\": (\\d+), \"time_us\": ([0-9.]+), \"algbw_gbps\": ([0-9.]+), \"busbw_gbps\": ([0-9.]+), \"buffer\": \"ordinary\"}")
                    .matcher(json);
            assertTrue(m.find(), json);
            assertEquals("4096", m.group(1));
            double us = Double.parseDouble(m.group(2));
            double algbw = Double.parseDouble(m.group(3));
            assertEquals(4096 / us / 1e3, algbw, algbw * 0.01 + 1e-4, "algbw = bytes / time");
            assertEquals(algbw, Double.parseDouble(m.group(4)), algbw * 0.01 + 1e-4, "busbw = algbw x 2(n-1)/n = algbw for 2 ranks");
            assertTrue(m.find(), json);
            assertEquals("262144", m.group(1));
        }
    }
}
