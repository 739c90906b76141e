package org.fleet4j.pserver.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.fleet4j.pserver.grpc.proto.PullSparseRequest;
import org.fleet4j.pserver.grpc.proto.StatsReply;
import org.fleet4j.pserver.grpc.proto.StatsRequest;
import org.fleet4j.pserver.grpc.proto.TableStats;
import org.junit.jupiter.api.Test;

/** Stats count a table's calls until their answer is handed to gRPC: a pull held in its reply shows as depth 1. */
class QueueDepthTest {
    @Test
    void aCallUnderWayShowsInItsTablesQueueDepth() throws Exception {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try (Barriers barriers = new Barriers(() -> "test:1", timer)) {
            ParameterServerService service = new ParameterServerService(GrpcTransport.PROTOCOL, Shards.shard(),
                    new CallCounts(), null, null, barriers, () -> "test:1", () -> { }, Runnable::run);
            CountDownLatch answering = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> pull = CompletableFuture.runAsync(() -> service.pullSparse(
                    PullSparseRequest.newBuilder().setTable("emb").setIds(ByteString.copyFrom(new byte[16])).build(),
                    new Held<>(answering, release)));
            assertTrue(answering.await(30, TimeUnit.SECONDS), "the pull reached its answer");
            assertEquals(Map.of("fc.w", 0, "fc.b", 0, "emb", 1, "wide", 0), depths(service));
            release.countDown();
            pull.get(30, TimeUnit.SECONDS);
            assertEquals(Map.of("fc.w", 0, "fc.b", 0, "emb", 0, "wide", 0), depths(service));
        } finally {
            timer.shutdownNow();
        }
    }

    private static Map<String, Integer> depths(ParameterServerService service) {
        CompletableFuture<StatsReply> stats = new CompletableFuture<>();
        service.stats(StatsRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(StatsReply value) {
                stats.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                stats.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        List<TableStats> tables = stats.join().getTablesList();
        return tables.stream().collect(Collectors.toMap(TableStats::getTable, TableStats::getQueueDepth));
    }

    /** A reply that waits in onNext until released, as a slow network would hold it. */
    private record Held<T>(CountDownLatch answering, CountDownLatch release) implements StreamObserver<T> {
        @Override
        public void onNext(T value) {
            answering.countDown();
            try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test did not release the reply within 30 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void onError(Throwable t) {
            answering.countDown();
        }

        @Override
        public void onCompleted() {
        }
    }
}
