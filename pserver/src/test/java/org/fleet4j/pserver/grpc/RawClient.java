package org.fleet4j.pserver.grpc;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.pserver.grpc.proto.HelloRequest;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;

/** A plain gRPC client of the service, as another language's would be: it sends whatever proof header it is given. */
final class RawClient implements AutoCloseable {
    private final ManagedChannel channel;

    RawClient(String endpoint) {
        InetSocketAddress a = TcpStore.parseHostPort(endpoint, "endpoint");
        channel = NettyChannelBuilder.forAddress(a.getHostString(), a.getPort()).usePlaintext().build();
    }

    /** A session from Hello (its server proof is not checked here). */
    byte[] hello() {
        return stub(null).hello(HelloRequest.newBuilder().setClientNonce(ByteString.copyFrom(JobToken.nonce())).build())
                .getSession().toByteArray();
    }

    /** A stub whose calls carry {@code header} as their proof (none when null), with a 10 s deadline. */
    ParameterServerGrpc.ParameterServerBlockingStub stub(byte[] header) {
        ParameterServerGrpc.ParameterServerBlockingStub stub = ParameterServerGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS);
        if (header == null) {
            return stub;
        }
        Metadata m = new Metadata();
        m.put(JobTokenCheck.PROOF_HEADER, header);
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m));
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
}
