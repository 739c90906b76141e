package org.fleet4j.pserver.star;

/**
 * The {@code star_server} protocol: pull/push semantics, one pull and one push per server per step carrying every
 * table's ids and gradients for that server (the compile step fuses a step's transfers whatever {@code tensor_fuse}
 * says), and each worker reads after its own writes: the next step's pull goes out behind the step's push on the
 * same connection, and the server applies the push before it serves the pull (a connection's frames are read in
 * order and each owner runs its parts in order). It runs on grpc++'s transport ({@link StarProtocol}): the control
 * calls over gRPC on the server's endpoint, a step's pull and push as one {@code PULL_MANY} and one
 * {@code PUSH_MANY} frame of grpc++'s framing on the server's data port, each with the job-token proof in its header
 * and the connection's deadline, answered by the network threads that own the tables. In sync mode a push returns
 * once the server has taken it; against a server that applies pushes as they come it returns once written, and its
 * answer is taken in front of the next pull's.
 */
public final class StarServerTransport extends StarProtocol {
    public static final String PROTOCOL = "star_server";

    public StarServerTransport() {
        super(PROTOCOL, false);
    }
}
