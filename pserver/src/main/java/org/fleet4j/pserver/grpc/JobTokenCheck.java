package org.fleet4j.pserver.grpc;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.fleet4j.cluster.RateLimitedLog;
import org.fleet4j.pserver.grpc.proto.ParameterServerGrpc;
import org.fleet4j.pserver.transport.CallProof;
import org.fleet4j.pserver.transport.Sessions;

/**
 * Lets a call through to the service only with a good proof of the job token ({@link Sessions#check}); Hello alone
 * goes without, as it is how a client gets its session. A refused call is closed before its request is read, so a
 * stranger reads and changes nothing; the refusal is logged (rate-limited, since strangers can provoke it at will).
 */
final class JobTokenCheck implements ServerInterceptor {
    private static final System.Logger LOG = System.getLogger(JobTokenCheck.class.getName());
    /** The metadata that carries a call's {@link CallProof}. */
    static final Metadata.Key<byte[]> PROOF_HEADER = Metadata.Key.of("fleet4j-auth-bin",
            Metadata.BINARY_BYTE_MARSHALLER);
    private static final String HELLO = ParameterServerGrpc.getHelloMethod().getFullMethodName();

    private final RateLimitedLog refusals = new RateLimitedLog(LOG, 5, 10, TimeUnit.SECONDS);
    private final Sessions sessions;
    private final Supplier<String> endpoint;

    JobTokenCheck(Sessions sessions, Supplier<String> endpoint) {
        this.sessions = sessions;
        this.endpoint = endpoint;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (method.equals(HELLO)) {
            return next.startCall(call, headers);
        }
        byte[] header = headers.get(PROOF_HEADER);
        String problem = header == null
                ? "it carries no job-token proof (" + PROOF_HEADER.name() + "; call Hello first)"
                : sessions.check(header, method);
        if (problem == null) {
            return next.startCall(call, headers);
        }
        String refusal = "parameter server " + endpoint.get() + " refused " + method + ": " + problem;
        refusals.warn(refusal + " (from " + call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) + ")");
        call.close(Status.UNAUTHENTICATED.withDescription(refusal), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }
}
