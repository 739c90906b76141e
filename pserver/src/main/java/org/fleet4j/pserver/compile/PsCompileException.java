package org.fleet4j.pserver.compile;

/** A program the PS compile step cannot turn into a worker program and server tables; the message names the op. */
public class PsCompileException extends RuntimeException {
    public PsCompileException(String message) {
        super(message);
    }
}
