package org.fleet4j.pserver.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Paddle's slice_variable and round-robin placement, on the cases its own rules decide. */
class DenseSlicingTest {
    private static DenseSlicing.Param param(String name, long... shape) {
        return new DenseSlicing.Param(name, shape);
    }

    @Test
    void aParameterBelowTheMinimumBlockStaysWhole() {
        List<DenseSlicing.Block> plan = DenseSlicing.plan(List.of(param("b", 1000, 8)), 4, 8192);
        assertEquals(List.of(new DenseSlicing.Block("b", 0, 0, 8000, 0)), plan);
    }

    @Test
    void blocksAreRoundedUpToWholeRowsAndDealtRoundRobin() {
        // 100,000 elements over 3 servers: ceil(100000 / 3) = 33,334, rounded up to rows of 10: 33,340
        List<DenseSlicing.Block> plan = DenseSlicing.plan(List.of(param("fc.w", 10000, 10), param("fc.b", 20000)), 3, 8192);
        assertEquals(List.of(
                new DenseSlicing.Block("fc.w", 0, 0, 33340, 0),
                new DenseSlicing.Block("fc.w", 1, 33340, 33340, 1),
                new DenseSlicing.Block("fc.w", 2, 66680, 33320, 2),
                // 20,000 elements hold only two blocks of 8,192; the next server in turn gets the first
                new DenseSlicing.Block("fc.b", 0, 0, 10000, 0),
                new DenseSlicing.Block("fc.b", 1, 10000, 10000, 1)), plan);
    }

    @Test
    void alignmentCanLeaveFewerBlocksThanServers() {
        // 3 rows of 5,000: ceil(15000 / 2) = 7,500 rounds up to 10,000, so two blocks of 2 rows and 1 row
        List<DenseSlicing.Block> plan = DenseSlicing.plan(List.of(param("e", 3, 5000)), 2, 10);
        assertEquals(List.of(new DenseSlicing.Block("e", 0, 0, 10000, 0), new DenseSlicing.Block("e", 1, 10000, 5000, 1)), plan);
    }

    @Test
    void tablesArePlannedByTheirNameAndShape() {
        DenseTableConfig fc = new DenseTableConfig("fc.w", new long[]{10000, 10}, new ServerOptimizer.Adam(0.1f),
                RowInitializer.constant(0f));
        assertEquals(DenseSlicing.plan(List.of(param("fc.w", 10000, 10)), 3, 8192), DenseSlicing.planTables(List.of(fc), 3, 8192));
        assertEquals("fc.w.block1 [33340, 66680) -> server 1", DenseSlicing.planTables(List.of(fc), 3, 8192).get(1).toString());
    }

    @Test
    void everyPlanCoversEachParameterOnceInWholeRows() {
        Random r = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            long rows = 1 + r.nextInt(5000);
            long width = 1 + r.nextInt(300);
            int servers = 1 + r.nextInt(9);
            long min = 1 + r.nextInt(20000);
            List<DenseSlicing.Block> plan = DenseSlicing.plan(List.of(param("p", rows, width)), servers, min);
            long next = 0;
            for (DenseSlicing.Block b : plan) {
                assertEquals(next, b.offset(), "blocks are contiguous: " + plan);
                assertTrue(b.offset() % width == 0, "a block starts on a row: " + b);
                assertTrue(b.numel() >= Math.min(min, rows * width) || b.block() == plan.size() - 1 || plan.size() == 1,
                        "only the last block may be under the minimum: " + b);
                next += b.numel();
            }
            assertEquals(rows * width, next);
            assertTrue(plan.size() <= servers, "at most one block per server: " + plan);
        }
    }
}
