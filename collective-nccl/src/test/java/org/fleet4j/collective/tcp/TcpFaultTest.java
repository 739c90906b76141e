package org.fleet4j.collective.tcp;

import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failures on the caller-driven data path: a peer that stops reading fails the sender at the group timeout, and a
 * rank that fails tells the peers waiting for it why, so that they fail at once with the original reason instead
 * of a bare disconnect or a timeout of their own.
 */
class TcpFaultTest {
    private static final Duration T = Duration.ofSeconds(60);

    @Test
    void aPeerThatStopsReadingFailsTheSenderAtTheTimeoutNamingIt() throws Exception {
        // far more than the socket buffers of both ends hold, so the sender must wait for a reader that never comes
        long bytes = 48L << 20;
        try (TcpWorld w = new TcpWorld(2, r -> GroupOptions.defaults().withTimeout(Duration.ofSeconds(2)));
             Arena arena = Arena.ofShared()) {
            MemorySegment big = arena.allocate(bytes, 64);
            List<Throwable> errors = w.failures((rank, g) -> {
                if (rank == 0) {
                    g.send(big, DataType.F32, 1).await(T);
                }
            });
            assertNull(errors.get(1));
            Throwable e = errors.get(0);
            assertNotNull(e, "the send must fail: rank 1 never receives");
            String msg = e.getMessage();
            assertTrue(msg.contains("timed out after 2000 ms sending to rank 1"), msg);
            assertTrue(msg.contains("ranks [1] did not take part"), msg);
        }
    }

    @Test
    void aFailingRankTellsThePeerWaitingForItWhy() throws Exception {
        // rank 0 gives up on the absent rank 2 long before rank 1 would time out by itself
        try (TcpWorld w = new TcpWorld(3, r -> GroupOptions.defaults()
                .withTimeout(Duration.ofSeconds(r == 0 ? 2 : 60)).withTcpChunkBytes(64 << 10));
             Arena arena = Arena.ofShared()) {
            List<Throwable> errors = w.failures((rank, g) -> {
                if (rank < 2) {
                    MemorySegment buf = arena.allocate(4L * 100_003, 64);
                    g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                }
            });
            String own = errors.get(0).getMessage();
            assertTrue(own.contains("timed out after 2000 ms waiting for data from rank 2"), own);
            Throwable told = errors.get(1);
            assertNotNull(told, "rank 1 must fail too");
            assertTrue(told.getMessage().contains("rank 0 aborted the group after: "), told.getMessage());
            assertTrue(told.getMessage().contains("waiting for data from rank 2: ranks [2] did not take part"), told.getMessage());
        }
    }
}
