package org.fleet4j.pserver.grpcpp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.fleet4j.text.Quoted;

/**
 * Where each server's grpc++ data port is: the control endpoint the cluster is described with (the gRPC port of
 * PADDLE_PSERVERS_IP_PORT_LIST) to the data endpoint, as lines {@code host:port=host:port}. Read from
 * {@code .endpoint_map} in the working directory when it exists (the file wins), else from
 * {@value #ENV}, which bin/fleetrun sets to the data ports it picked (comma-separated entries of the same form).
 * Blank lines and lines starting with {@code #} are skipped.
 */
public final class EndpointMap {
    public static final String FILE = ".endpoint_map";
    public static final String ENV = "FLEET_PS_ENDPOINT_MAP";

    private final Map<String, String> data;
    private final String source;

    private EndpointMap(Map<String, String> data, String source) {
        this.data = Collections.unmodifiableMap(new LinkedHashMap<>(data));
        this.source = source;
    }

    public static EndpointMap empty() {
        return new EndpointMap(Map.of(), "no endpoint map");
    }

    /** {@code dir}/.endpoint_map if it exists, else {@value #ENV} from {@code env}, else empty. */
    public static EndpointMap discover(Path dir, Map<String, String> env) {
        Path file = dir.resolve(FILE);
        if (Files.isRegularFile(file)) {
            try {
                return parse(Files.readAllLines(file, StandardCharsets.UTF_8), file.toString());
            } catch (IOException e) {
                throw new IllegalArgumentException(file + ": cannot be read (" + e.getMessage() + ")", e);
            }
        }
        String published = env.get(ENV);
        if (published != null && !published.isBlank()) {
            return parse(Arrays.asList(published.split(",")), ENV);
        }
        return empty();
    }

    /** Parses lines of {@code source}; a line that is not {@code host:port=host:port} fails naming it. */
    public static EndpointMap parse(List<String> lines, String source) {
        Map<String, String> data = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = source + (source.equals(ENV) ? " entry " : " line ") + (i + 1);
            int eq = line.indexOf('=');
            if (eq < 0 || !isHostPort(line.substring(0, eq).strip()) || !isHostPort(line.substring(eq + 1).strip())) {
                throw new IllegalArgumentException(where + ": " + Quoted.of(line) + " is not host:port=host:port (the server's"
                        + " control endpoint = its grpc++ data endpoint); fix or remove the line");
            }
            String control = line.substring(0, eq).strip();
            if (data.put(control, line.substring(eq + 1).strip()) != null) {
                throw new IllegalArgumentException(where + ": " + control + " is mapped twice; keep one line for it");
            }
        }
        return new EndpointMap(data, source);
    }

    private static boolean isHostPort(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            return false;
        }
        try {
            int port = Integer.parseInt(s.substring(colon + 1));
            return port >= 0 && port <= 65535 && s.substring(0, colon).chars().noneMatch(Character::isWhitespace);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The data endpoint of the server whose control endpoint is {@code control}. */
    public Optional<String> dataEndpoint(String control) {
        return Optional.ofNullable(data.get(control));
    }

    /** Where the map came from: the file, the variable, or none. */
    public String source() {
        return source;
    }

    /** The entries, in order, as {@value #ENV} holds them. */
    public String asVariable() {
        return String.join(",", data.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
    }
}
