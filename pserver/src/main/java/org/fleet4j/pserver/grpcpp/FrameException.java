package org.fleet4j.pserver.grpcpp;

/** A frame that breaks the protocol: the connection it came on is dropped with this message logged. */
final class FrameException extends Exception {
    FrameException(String message) {
        super(message);
    }
}
