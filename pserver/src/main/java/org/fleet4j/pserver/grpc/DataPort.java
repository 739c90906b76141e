package org.fleet4j.pserver.grpc;

import java.util.Map;

/**
 * A server's own data port next to this service (grpc++, star_server): the service's Hello tells workers where it
 * listens, and Stats counts its calls with the service's own.
 */
public interface DataPort {
    /** host:port. */
    String endpoint();

    /** Calls answered on the data port so far, by the grpc method's short name ({@code PullMany}, ...). */
    Map<String, Long> calls();
}
