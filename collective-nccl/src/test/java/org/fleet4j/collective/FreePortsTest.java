package org.fleet4j.collective;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Runs of free ports: below the kernel's ephemeral range where it leaves room, and bindable. */
class FreePortsTest {
    @Test
    void aRunLiesBelowTheEphemeralRangeAndCanBeBoundWhole() throws IOException {
        assumeTrue(Files.exists(FreePorts.RANGE), "not Linux: no " + FreePorts.RANGE);
        OptionalInt low = FreePorts.ephemeralLow();
        assertTrue(low.isPresent(), FreePorts.RANGE + " did not read as two numbers");
        assumeTrue(low.getAsInt() - 4 >= FreePorts.LOWEST, "this kernel's ephemeral range starts at " + low.getAsInt()
                + ", leaving no room below it");
        for (int i = 0; i < 20; i++) {
            int start = FreePorts.consecutive(4);
            assertTrue(start >= FreePorts.LOWEST && start + 3 < low.getAsInt(),
                    "run " + start + ".." + (start + 3) + " overlaps the ephemeral range from " + low.getAsInt());
            bindWhole(start, 4);
        }
    }

    @Test
    void withoutRoomBelowTheRangeTheKernelPicksTheStart() throws IOException {
        int start = FreePorts.consecutive(3, OptionalInt.of(FreePorts.LOWEST + 2));
        bindWhole(start, 3);
        int unknown = FreePorts.consecutive(2, OptionalInt.empty());
        bindWhole(unknown, 2);
    }

    @Test
    void aRunOfNoPortsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> FreePorts.consecutive(0));
    }

    private static void bindWhole(int start, int count) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int p = start; p < start + count; p++) {
                held.add(new ServerSocket(p));
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }
}
