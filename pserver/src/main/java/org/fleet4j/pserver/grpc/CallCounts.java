package org.fleet4j.pserver.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Calls let through to the service, by method's short name: what Stats reports as {@code calls}. */
final class CallCounts implements ServerInterceptor {
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                      ServerCallHandler<Q, A> next) {
        counts.computeIfAbsent(call.getMethodDescriptor().getBareMethodName(), k -> new LongAdder()).increment();
        return next.startCall(call, headers);
    }

    Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((method, n) -> out.put(method, n.sum()));
        return out;
    }
}
