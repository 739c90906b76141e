package org.fleet4j.collective;

import org.fleet4j.collective.shm.ShmFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mismatched calls, strangers and garbage on the ports, stale shared memory, and argument errors. */
class BadInputTest {
    private static final GroupOptions OPTIONS = GroupOptions.defaults().withTimeout(Duration.ofSeconds(20));
    private static final Duration T = Duration.ofSeconds(30);

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void mismatchedSizesFailOnEveryRankNamingBothCalls(Backend backend) throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(backend)); Arena arena = Arena.ofShared()) {
            List<Throwable> errors = w.failures((rank, g) -> {
                MemorySegment buf = arena.allocate(4L * (rank == 0 ? 1000 : 1001));
                g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                return null;
            });
            for (int r = 0; r < 2; r++) {
                assertNotNull(errors.get(r), "rank " + r + " must fail");
                String msg = errors.get(r).getMessage();
                assertTrue(msg.contains("mismatched calls"), msg);
                assertTrue(msg.contains("f32 x 1000") && msg.contains("f32 x 1001"), msg);
            }
            // the group is unusable afterwards and says why
            CollectiveException later = assertThrows(CollectiveException.class,
                    () -> w.group(0).barrier().await(T));
            assertTrue(later.getMessage().contains("failed earlier"), later.getMessage());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void mismatchedDtypeOrOpIsDetected(Backend backend) throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(backend)); Arena arena = Arena.ofShared()) {
            List<Throwable> errors = w.failures((rank, g) -> {
                MemorySegment buf = arena.allocate(4L * 64);
                g.allreduce(buf, DataType.I32, rank == 0 ? ReduceOp.SUM : ReduceOp.MAX).await(T);
                return null;
            });
            assertTrue(errors.get(0).getMessage().contains("sum") && errors.get(0).getMessage().contains("max"),
                    errors.get(0).getMessage());
        }
    }

    @Test
    void strangersAndGarbageOnTheDataPortAreDroppedAndTheJobCarriesOn() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(Backend.TCP)); Arena arena = Arena.ofShared()) {
            String endpoint = w.stores.get(0).getString("g/default/tcp/0", T);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            byte[] noise = new byte[4096];
            new Random(42).nextBytes(noise);
            assertClosedAfter(port, noise);
            assertClosedAfter(port, hello(new byte[16], "default", 1));
            assertClosedAfter(port, hello(new byte[16], "default", 1));
            // a length prefix far beyond any chunk is rejected before anything is allocated for it
            assertClosedAfter(port, ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(7).array());
            w.run((rank, g) -> {
                MemorySegment buf = Buffers.filled(arena, DataType.F32, 1000, rank);
                g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(T);
                assertEquals(Buffers.expected(DataType.F32, ReduceOp.SUM, 2, 999), Buffers.get(buf, DataType.F32, 999));
                return null;
            });
        }
    }

    @Test
    void garbageOnTheStorePortIsDroppedAndTheStoreCarriesOn() throws Exception {
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(Backend.TCP))) {
            byte[] noise = new byte[1024];
            new Random(7).nextBytes(noise);
            assertClosedAfter(w.server.hostedPort(), noise);
            w.stores.get(1).setString("still", "works");
            assertEquals("works", w.stores.get(0).getString("still", T));
        }
    }

    private static byte[] hello(byte[] token, String group, int rank) {
        byte[] name = group.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 4 + token.length + 4 + name.length + 4);
        b.putInt(1 + 4 + token.length + 4 + name.length + 4).put((byte) 1).putInt(token.length).put(token)
                .putInt(name.length).put(name).putInt(rank);
        return b.array();
    }

    /** Connects, sends {@code bytes}, and expects the far end to close the connection (read returns -1). */
    private static void assertClosedAfter(int port, byte[] bytes) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            s.setSoTimeout(15_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(bytes);
                out.flush();
            } catch (java.io.IOException alreadyClosed) {
                return;
            }
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // the store answers a bad hello with one status byte before closing
                }
            } catch (java.net.SocketException reset) {
                // closed with a reset: also a close
            }
        }
    }

    @Test
    void staleSegmentsOfDeadProcessesAreRemovedAndOwnSegmentsDoNotOutliveTheGroup() throws Exception {
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        Path stale = ShmFiles.directory().resolve("fleet4j-" + dead.pid() + "-crashedjob-default-1");
        Files.write(stale, new byte[4096]);
        try (LocalWorld w = new LocalWorld(2, OPTIONS.withBackend(Backend.SHM))) {
            assertFalse(Files.exists(stale), "stale segment " + stale + " must be removed when a group starts");
            try (var files = Files.list(ShmFiles.directory())) {
                String mine = "fleet4j-" + ProcessHandle.current().pid() + "-";
                assertTrue(files.noneMatch(f -> f.getFileName().toString().startsWith(mine)),
                        "a mapped segment is unlinked once every rank has it");
            }
        }
    }

    @Test
    void argumentErrorsNameTheProblem() throws Exception {
        try (LocalWorld w = new LocalWorld(1, OPTIONS.withBackend(Backend.SHM)); Arena arena = Arena.ofShared()) {
            ProcessGroup g = w.group(0);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> g.allreduce(arena.allocate(10), DataType.F32, ReduceOp.SUM));
            assertTrue(e.getMessage().contains("10 bytes") && e.getMessage().contains("f32"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> g.broadcast(arena.allocate(8), DataType.F32, 3));
            assertTrue(e.getMessage().contains("root 3"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> g.allgather(arena.allocate(8), arena.allocate(4), DataType.F32));
            assertTrue(e.getMessage().contains("recv buffer holds 1 elements"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> g.newGroup("default", OPTIONS));
            assertTrue(e.getMessage().contains("already in use"), e.getMessage());
        }
    }
}
