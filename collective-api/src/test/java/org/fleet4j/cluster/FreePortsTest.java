package org.fleet4j.cluster;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Runs of free ports: below the kernel's ephemeral range where it leaves room, and bindable. */
class FreePortsTest {
    @Test
    void aRunLiesBelowTheEphemeralRangeAndCanBeBoundWhole() {
        assumeTrue(Files.exists(FreePorts.RANGE), "not Linux: no " + FreePorts.RANGE);
        OptionalInt low = FreePorts.ephemeralLow();
        assertTrue(low.isPresent(), FreePorts.RANGE + " did not read as two numbers");
        assumeTrue(low.getAsInt() - 4 >= FreePorts.LOWEST, "this kernel's ephemeral range starts at " + low.getAsInt()
                + ", leaving no room below it");
        for (int i = 0; i < 20; i++) {
            int start = FreePorts.consecutive(4);
            assertTrue(start >= FreePorts.LOWEST && start + 3 < low.getAsInt(),
                    "run " + start + ".." + (start + 3) + " overlaps the ephemeral range from " + low.getAsInt());
            assertTrue(FreePorts.runFree(start, 4), "run " + start + ".." + (start + 3) + " cannot be bound");
        }
    }

    @Test
    void withoutRoomBelowTheRangeTheKernelPicksTheStart() {
        int start = FreePorts.consecutive(3, OptionalInt.of(FreePorts.LOWEST + 2));
        assertTrue(FreePorts.runFree(start, 3), "run from " + start + " cannot be bound");
        int unknown = FreePorts.consecutive(2, OptionalInt.empty());
        assertTrue(FreePorts.runFree(unknown, 2), "run from " + unknown + " cannot be bound");
    }

    @Test
    void aRunOfNoPortsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> FreePorts.consecutive(0));
    }
}
