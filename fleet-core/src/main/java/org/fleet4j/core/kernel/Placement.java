package org.fleet4j.core.kernel;

/**
 * Where one op instance runs on a device: its device kernel, its CPU kernel on host copies (a declared host fallback,
 * with the reason), or nowhere (the reason names what is missing).
 */
public record Placement(Kind kind, String reason) {
    public enum Kind { DEVICE, HOST_FALLBACK, NONE }

    public boolean runs() {
        return kind != Kind.NONE;
    }
}
