package org.fleet4j.pserver.transport;

import java.time.Duration;

/** A running parameter server: its tables served on an endpoint. */
public interface PsServer extends AutoCloseable {
    /** The endpoint it listens on (host:port; the port is the real one when the options asked for port 0). */
    String endpoint();

    /** Waits until a worker's {@code stop} or {@link #close()} ended serving; false if {@code timeout} passed first. */
    boolean awaitStop(Duration timeout) throws InterruptedException;

    @Override
    void close();
}
