package org.fleet4j.fleet.role;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.text.Quoted;

/**
 * Reads a launcher's or scheduler's variables; every error names the variable and what was expected, and every
 * variable read is remembered ({@link #read}) so the dry run can say where each part of a role came from.
 */
final class EnvVars {
    private final Map<String, String> env;
    private final String launcher;
    private final Map<String, String> read = new LinkedHashMap<>();

    EnvVars(Map<String, String> env, String launcher) {
        this.env = Map.copyOf(env);
        this.launcher = launcher;
    }

    boolean has(String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }

    String string(String name) {
        if (!has(name)) {
            throw new IllegalArgumentException(launcher + ": environment variable " + name + " is not set");
        }
        String v = env.get(name).trim();
        read.put(name, v);
        return v;
    }

    String string(String name, String fallback) {
        return has(name) ? string(name) : fallback;
    }

    int integer(String name) {
        String v = string(name);
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(launcher + ": environment variable " + name + "=" + Quoted.of(v)
                    + " is not an integer");
        }
    }

    int integer(String name, int fallback) {
        return has(name) ? integer(name) : fallback;
    }

    /** An integer in 0..bound-1, where {@code bound} comes from {@code boundName}. */
    int index(String name, int bound, String boundName) {
        int v = integer(name);
        if (v < 0 || v >= bound) {
            throw new IllegalArgumentException(launcher + ": environment variable " + name + "=" + v + " is outside 0.."
                    + (bound - 1) + " (" + boundName + "=" + bound + ")");
        }
        return v;
    }

    int positive(String name) {
        int v = integer(name);
        if (v < 1) {
            throw new IllegalArgumentException(launcher + ": environment variable " + name + "=" + v + " must be at least 1");
        }
        return v;
    }

    /** Fails naming both variables when {@code whole} ranks do not split evenly over {@code parts} nodes. */
    int evenShare(int whole, String wholeName, int parts, String partsName) {
        if (parts < 1 || whole % parts != 0) {
            throw new IllegalArgumentException(launcher + ": " + wholeName + "=" + whole + " ranks do not split evenly over "
                    + partsName + "=" + parts + " nodes; Fleet4J needs the same number of ranks on every node");
        }
        return whole / parts;
    }

    /** FLEET_MASTER, else MASTER_ADDR:MASTER_PORT; null when neither is set. */
    String masterOrNull() {
        if (has("FLEET_MASTER")) {
            return string("FLEET_MASTER");
        }
        if (has("MASTER_ADDR") != has("MASTER_PORT")) {
            throw new IllegalArgumentException(launcher + ": " + (has("MASTER_ADDR") ? "MASTER_PORT" : "MASTER_ADDR")
                    + " is not set, but " + (has("MASTER_ADDR") ? "MASTER_ADDR" : "MASTER_PORT") + " is; set both");
        }
        if (has("MASTER_ADDR")) {
            return string("MASTER_ADDR") + ":" + port("MASTER_PORT");
        }
        return null;
    }

    /** The master, required for a world of more than one rank. */
    String master(int worldSize) {
        String master = masterOrNull();
        if (master == null && worldSize > 1) {
            throw new IllegalArgumentException(launcher + ": a world of " + worldSize + " ranks needs the rendezvous "
                    + "address: set FLEET_MASTER=host:port, or MASTER_ADDR and MASTER_PORT (rank 0 hosts the store there)");
        }
        return master;
    }

    /**
     * FLEET_MASTER or MASTER_ADDR:MASTER_PORT when set, else {@code host} at MASTER_PORT, else at {@code defaultPort}:
     * for schedulers that name the first node but no port.
     */
    String masterAt(String host, int defaultPort) {
        if (has("FLEET_MASTER") || has("MASTER_ADDR")) {
            return masterOrNull();
        }
        return host + ":" + (has("MASTER_PORT") ? port("MASTER_PORT") : defaultPort);
    }

    int port(String name) {
        int p = integer(name);
        if (p < 1 || p > 65535) {
            throw new IllegalArgumentException(launcher + ": environment variable " + name + "=" + p
                    + " is not a port (1..65535)");
        }
        return p;
    }

    String jobId() {
        return string("FLEET_JOB_ID", "fleet4j");
    }

    String launcher() {
        return launcher;
    }

    /** Every variable read so far, as NAME=value, in the order read. */
    List<String> read() {
        List<String> out = new ArrayList<>();
        read.forEach((k, v) -> out.add(k + "=" + Quoted.bare(v)));
        return out;
    }

    IllegalArgumentException error(String message) {
        return new IllegalArgumentException(launcher + ": " + message);
    }
}
