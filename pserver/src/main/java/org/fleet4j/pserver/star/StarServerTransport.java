package org.fleet4j.pserver.star;

/**
 * The {@code star_server} protocol: pull/push semantics, one pull and one push per server per step carrying every
 * table's ids and gradients for that server (the compile step fuses a step's transfers whatever {@code tensor_fuse}
 * says), and each worker reads after its own writes: a step's push returns once the server has applied it, so the
 * next step's pull sees it. On the server each connection's calls run on its network thread in arrival order.
 * The messages are the grpc protocol's PullMany/PushMany, with its job-token proof and deadlines (a leaner framing,
 * such as grpc++'s, could carry the same batches later).
 */
public final class StarServerTransport extends StarProtocol {
    public static final String PROTOCOL = "star_server";

    public StarServerTransport() {
        super(PROTOCOL, false);
    }
}
