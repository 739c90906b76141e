package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

/** What a server stopped during a barrier says: each round in progress, with the workers that have not arrived. */
class BarrierWaitsTest {
    @Test
    void theRoundsInProgressNameTheWorkersNotYetArrived() {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try (Barriers barriers = new Barriers(() -> "127.0.0.1:6170", timer)) {
            assertEquals(List.of(), barriers.waits(), "no round in progress");
            barriers.arrive("step", 0, 3, Duration.ofMinutes(1), why -> { });
            barriers.arrive("step", 2, 3, Duration.ofMinutes(1), why -> { });
            List<String> waits = barriers.waits();
            assertEquals(1, waits.size(), waits.toString());
            assertTrue(waits.getFirst().startsWith("barrier 'step' (generation "), waits.getFirst());
            assertTrue(waits.getFirst().endsWith(", 3 workers) on parameter server 127.0.0.1:6170: waiting for worker"
                    + " [1] (arrived: [0, 2])"), waits.getFirst());
            barriers.arrive("step", 1, 3, Duration.ofMinutes(1), why -> { });
            assertEquals(List.of(), barriers.waits(), "the round is complete");
        } finally {
            timer.shutdownNow();
        }
    }
}
