package org.fleet4j.collective.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Random;
import org.bytedeco.cuda.global.nccl;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;
import org.junit.jupiter.api.Test;

/** The rendezvous half of NCCL set-up, over the real TCP store on loopback: needs no GPU. */
class NcclIdExchangeTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final JobToken TOKEN = JobToken.random();

    @Test
    void rankZeroPublishesAndTheOthersReceiveTheSameId() throws Exception {
        byte[] id = new byte[NcclIdExchange.ID_BYTES];
        new Random(7).nextBytes(id);
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job", TOKEN, TIMEOUT);
             TcpStore peer = TcpStore.connect("127.0.0.1", host.hostedPort(), "job", TOKEN, TIMEOUT)) {
            var received = new java.util.concurrent.CompletableFuture<byte[]>();
            Thread rank1 = Thread.ofPlatform().start(() -> {
                try {
                    received.complete(NcclIdExchange.share(peer, "comm0", 1, () -> {
                        throw new AssertionError("only rank 0 creates the id");
                    }, TIMEOUT));
                } catch (Throwable t) {
                    received.completeExceptionally(t);
                }
            });
            assertArrayEquals(id, NcclIdExchange.share(host, "comm0", 0, () -> id, TIMEOUT));
            assertArrayEquals(id, received.get(20, java.util.concurrent.TimeUnit.SECONDS));
            rank1.join();
        }
    }

    @Test
    void aMissingRankZeroIsNamedAfterTheTimeout() {
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job", TOKEN, TIMEOUT)) {
            var e = assertThrows(CollectiveException.class,
                    () -> NcclIdExchange.share(host, "comm1", 3, () -> new byte[128], Duration.ofMillis(200)));
            assertTrue(e.getMessage().startsWith("rank 3 waited 200 ms for the NCCL unique id of group 'comm1' from rank 0"
                    + " (store key 'nccl/comm1/unique-id')"), e.getMessage());
        }
    }

    @Test
    void aWrongSizedIdIsRejected() {
        try (TcpStore host = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "job", TOKEN, TIMEOUT)) {
            host.set(NcclIdExchange.key("g"), new byte[5]);
            var e = assertThrows(CollectiveException.class, () -> NcclIdExchange.share(host, "g", 1, null, TIMEOUT));
            assertTrue(e.getMessage().contains("has 5 bytes, expected 128"), e.getMessage());
        }
    }

    @Test
    void typesMapToNcclEnums() {
        assertEquals(nccl.ncclFloat32, NcclTypes.dtype(DataType.F32));
        assertEquals(nccl.ncclBfloat16, NcclTypes.dtype(DataType.BF16));
        assertEquals(nccl.ncclInt64, NcclTypes.dtype(DataType.I64));
        assertEquals(nccl.ncclAvg, NcclTypes.op(ReduceOp.AVG));
        assertEquals(nccl.ncclProd, NcclTypes.op(ReduceOp.PROD));
    }
}
