package org.fleet4j.launch;

import org.fleet4j.text.Quoted;

/** A {@code host:port} endpoint, as {@code --master} takes it and the ranks receive it. */
public record HostPort(String host, int port) {
    public HostPort {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host is empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535");
        }
    }

    /** Parses {@code host:port}; {@code flag} names the option in the error message. */
    public static HostPort parse(String value, String flag) {
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new LaunchException(flag + " " + Quoted.of(value) + ": expected HOST:PORT, e.g. 10.0.0.1:6170");
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        String port = value.substring(colon + 1);
        if (!port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            throw new LaunchException(flag + " " + Quoted.of(value) + ": port " + Quoted.of(port) + " is not a number in 1..65535");
        }
        return new HostPort(host, Integer.parseInt(port));
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
