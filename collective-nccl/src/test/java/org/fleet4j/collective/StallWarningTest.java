package org.fleet4j.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rank waiting in a collective for a peer that does not come warns once, at a fraction of the group's timeout,
 * naming the operation, its sequence number, the group and the peers it has not heard from, and goes on waiting:
 * the timeout, not the warning, fails the operation.
 */
class StallWarningTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void aRankWaitingForAStalledPeerWarnsBeforeItsTimeout(Backend backend) throws Exception {
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger root = Logger.getLogger("");
        root.addHandler(capture);
        GroupOptions options = GroupOptions.defaults().withBackend(backend).withTimeout(TIMEOUT);
        try (LocalWorld world = new LocalWorld(2, options); Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(4L * 4);
            world.run((rank, group) -> {
                group.allreduce(buffer.asSlice(0), DataType.F32, ReduceOp.SUM).await(TIMEOUT);
                return null;
            });
            long started = System.currentTimeMillis();
            CollectiveException timedOut = assertThrows(CollectiveException.class,
                    () -> world.group(0).allreduce(buffer, DataType.F32, ReduceOp.SUM).await(TIMEOUT.multipliedBy(3)));
            long failed = System.currentTimeMillis();
            assertTrue(timedOut.getMessage().contains("timed out"), timedOut.getMessage());

            List<LogRecord> stalls = warnings.stream().filter(r -> r.getMessage().contains("allreduce #1")).toList();
            assertEquals(1, stalls.size(), "one warning for the stalled operation: " + warnings.stream()
                    .map(LogRecord::getMessage).toList());
            String message = stalls.get(0).getMessage();
            assertTrue(message.startsWith("rank 0 of group 'default' (2 ranks): allreduce #1 (f32 x 4, sum) has waited 1 s"
                    + " for ranks [1]"), message);
            assertTrue(message.contains("still waiting, up to 3 s in all (FLEET_TIMEOUT), before it fails"), message);
            long warnedAfter = stalls.get(0).getMillis() - started;
            assertTrue(warnedAfter >= 900 && stalls.get(0).getMillis() < failed, "warned " + warnedAfter
                    + " ms after the call, failed " + (failed - started) + " ms after it");
        } finally {
            root.removeHandler(capture);
        }
    }
}
