package org.fleet4j.pserver.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.concurrent.atomic.AtomicLong;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.pserver.transport.CallProof;

/** A worker's side of the job-token check: every call gets a fresh sequence number and its proof. */
final class CallSigner implements ClientInterceptor {
    private final JobToken token;
    private final byte[] session;
    private final AtomicLong sequence = new AtomicLong();

    CallSigner(JobToken token, byte[] session) {
        this.token = token;
        this.session = session.clone();
    }

    @Override
    public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<A> listener, Metadata headers) {
                headers.put(JobTokenCheck.PROOF_HEADER, CallProof.header(token, session, sequence.getAndIncrement(),
                        method.getFullMethodName()));
                super.start(listener, headers);
            }
        };
    }
}
