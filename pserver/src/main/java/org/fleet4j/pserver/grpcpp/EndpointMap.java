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
 * Blank lines and lines starting with {@code #} are skipped. A map is checked whole when it is read: port 0, two
 * servers on one data port, or a data port on a server's control endpoint would fail only when the servers bind, or
 * leave the workers waiting on a port nobody serves, so each is refused naming its lines.
 */
public final class EndpointMap {
    public static final String FILE = ".endpoint_map";
    public static final String ENV = "FLEET_PS_ENDPOINT_MAP";

    /** One server's data endpoint, and the line of the map that says so (1-based). */
    private record Entry(String control, String data, int line) {
    }

    private final Map<String, Entry> entries;
    private final String source;

    private EndpointMap(Map<String, Entry> entries, String source) {
        this.entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries));
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

    /**
     * Parses lines of {@code source}; a line that is not {@code host:port=host:port}, a data port of 0, and two lines
     * whose ports collide fail naming the lines.
     */
    public static EndpointMap parse(List<String> lines, String source) {
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = where(source, List.of(i + 1));
            int eq = line.indexOf('=');
            if (eq < 0 || !isHostPort(line.substring(0, eq).strip()) || !isHostPort(line.substring(eq + 1).strip())) {
                throw new IllegalArgumentException(where + ": " + Quoted.of(line) + " is not host:port=host:port (the server's"
                        + " control endpoint = its grpc++ data endpoint); fix or remove the line");
            }
            String control = line.substring(0, eq).strip();
            String data = line.substring(eq + 1).strip();
            if (port(data) == 0) {
                throw new IllegalArgumentException(where + ": '" + line + "' maps the server to data port 0 (any free"
                        + " port), which its workers cannot know; give it a fixed free port");
            }
            if (entries.put(control, new Entry(control, data, i + 1)) != null) {
                throw new IllegalArgumentException(where + ": " + control + " is mapped twice; keep one line for it");
            }
        }
        checkCollisions(entries, source);
        return new EndpointMap(entries, source);
    }

    /** No two servers on one data endpoint, and no data endpoint on a server's control endpoint. */
    private static void checkCollisions(Map<String, Entry> entries, String source) {
        Map<String, Entry> byData = new LinkedHashMap<>();
        for (Entry e : entries.values()) {
            Entry other = byData.putIfAbsent(e.data(), e);
            if (other != null) {
                throw new IllegalArgumentException(where(source, List.of(other.line(), e.line())) + ": servers "
                        + other.control() + " and " + e.control() + " both map to data endpoint " + e.data()
                        + "; give each server a data port of its own");
            }
            if (e.data().equals(e.control())) {
                throw new IllegalArgumentException(where(source, List.of(e.line())) + ": data endpoint " + e.data()
                        + " of server " + e.control() + " is its own control endpoint; give it a data port of its own");
            }
            Entry server = entries.get(e.data());
            if (server != null) {
                throw new IllegalArgumentException(where(source, List.of(e.line(), server.line()).stream().sorted()
                        .toList()) + ": data endpoint " + e.data() + " of server " + e.control() + " is the control"
                        + " endpoint of server " + server.control() + "; give each server a data port that no other"
                        + " port of the job uses");
            }
        }
    }

    /**
     * Fails naming the line when a data endpoint is one that another process of the job listens on: {@code taken} maps
     * such endpoints to what holds them ("rank 0's endpoint").
     */
    public void checkFree(Map<String, String> taken) {
        for (Entry e : entries.values()) {
            String holder = taken.get(e.data());
            if (holder != null) {
                throw new IllegalArgumentException(where(source, List.of(e.line())) + ": data endpoint " + e.data()
                        + " of server " + e.control() + " is " + holder + "; give the server a data port that no other"
                        + " port of the job uses");
            }
        }
    }

    /** "/w/.endpoint_map line 2", "... lines 1 and 3", "FLEET_PS_ENDPOINT_MAP entries 1 and 2". */
    private static String where(String source, List<Integer> lines) {
        boolean variable = source.equals(ENV);
        String noun = variable ? (lines.size() == 1 ? "entry" : "entries") : (lines.size() == 1 ? "line" : "lines");
        return source + " " + noun + " " + String.join(" and ", lines.stream().map(String::valueOf).toList());
    }

    private static boolean isHostPort(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            return false;
        }
        try {
            int port = port(s);
            return port >= 0 && port <= 65535 && s.substring(0, colon).chars().noneMatch(Character::isWhitespace);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static int port(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }

    /** The data endpoint of the server whose control endpoint is {@code control}. */
    public Optional<String> dataEndpoint(String control) {
        return Optional.ofNullable(entries.get(control)).map(Entry::data);
    }

    /** Where the map came from: the file, the variable, or none. */
    public String source() {
        return source;
    }

    /** The entries, in order, as {@value #ENV} holds them. */
    public String asVariable() {
        return String.join(",", entries.values().stream().map(e -> e.control() + "=" + e.data()).toList());
    }
}
