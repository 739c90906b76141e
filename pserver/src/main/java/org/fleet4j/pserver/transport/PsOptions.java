package org.fleet4j.pserver.transport;

import java.time.Duration;
import org.fleet4j.cluster.JobToken;

/**
 * What both ends of a parameter-server connection agree on: the endpoint a server listens on (host:port, port 0
 * for a free one), the deadline of every call, and the job token that every call must prove (null: none, for a
 * single-host job started without one).
 */
public record PsOptions(String endpoint, Duration deadline, JobToken token) {
    public PsOptions {
        if (deadline == null || deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("a parameter-server deadline must be positive, got " + deadline);
        }
    }

    public PsOptions withEndpoint(String endpoint) {
        return new PsOptions(endpoint, deadline, token);
    }
}
