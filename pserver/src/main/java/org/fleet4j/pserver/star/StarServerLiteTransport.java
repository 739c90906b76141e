package org.fleet4j.pserver.star;

/**
 * The {@code star_server_lite} protocol: {@link StarServerTransport}'s pull/push, but a step's push is held and goes
 * out right behind the next step's pull, both in flight at once. The server runs a connection's calls in arrival
 * order, so that pull never sees that push: a worker reads values one step stale, the lite trade of robustness for
 * speed. A barrier, save, stats, stop or close sends a held push first (in sync mode with several workers the
 * step's barrier does, so there is nothing to overlap).
 */
public final class StarServerLiteTransport extends StarProtocol {
    public static final String PROTOCOL = "star_server_lite";

    public StarServerLiteTransport() {
        super(PROTOCOL, true);
    }
}
