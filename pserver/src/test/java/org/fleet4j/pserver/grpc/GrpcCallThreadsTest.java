package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a server answers: pulls and pushes on the network thread that received them, with no hand-off to a pool of
 * call threads and back (each hand-off cost a selector wake-up); only save and load, which take long, start a call
 * thread. Seen from the threads the server has started: none of the call pool after many pulls and pushes.
 */
class GrpcCallThreadsTest {
    private static final String CALL_THREADS = "ps-grpc-server-call";

    @TempDir
    Path dir;

    @Test
    void pullsAndPushesStartNoCallThreadAndSaveDoes() throws Exception {
        Set<Thread> before = callThreads();
        PsOptions options = Shards.options(JobToken.random());
        MemorySegment ids = Shards.ids(1, 2, 3, 4);
        MemorySegment rows = Shards.floats(4L * Shards.DIM);
        try (PsServer server = Shards.GRPC.serve(Shards.shard(), options);
             PsConnection c = Shards.GRPC.connect(server.endpoint(), options)) {
            for (int i = 0; i < 50; i++) {
                c.pullSparse("emb", ids, 4, rows);
                c.pushSparse("emb", ids, 4, rows);
                c.pullDense("fc.b", 0, rows.asSlice(0, Shards.DIM * Float.BYTES));
            }
            Set<Thread> started = callThreads();
            started.removeAll(before);
            assertEquals(Set.of(), started, "pulls and pushes are answered on the network threads");
            c.save(dir, SaveIdentity.fresh("test", 0, 0));
            assertTrue(Files.list(dir).findAny().isPresent(), "the shard was saved");
            started = callThreads();
            started.removeAll(before);
            assertEquals(1, started.size(), "save ran on a call thread: " + started);
        }
    }

    private static Set<Thread> callThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(CALL_THREADS))
                .collect(Collectors.toSet());
    }
}
