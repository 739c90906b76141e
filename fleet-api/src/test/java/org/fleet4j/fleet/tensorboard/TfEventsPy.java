package org.fleet4j.fleet.tensorboard;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The independent reader and encoder of event files, {@code tfevents.py} beside this class (Python's standard library
 * only: its own CRC32C and protobuf decoding), for tests here and in the tests module.
 */
public final class TfEventsPy {
    private static final ObjectMapper JSON = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    private TfEventsPy() {
    }

    /** Every record of {@code file}, as the Python reader decodes it; fails if it finds a bad CRC or a cut record. */
    public static List<JsonNode> read(Path file) throws IOException, InterruptedException {
        List<JsonNode> events = new ArrayList<>();
        for (String line : run("read", file.toString()).split("\n")) {
            if (!line.isBlank()) {
                events.add(JSON.readTree(line));
            }
        }
        return events;
    }

    /** The framed records of {@code eventsJson} (a JSON list of events, as {@link #read} returns them), as Python writes them. */
    public static byte[] encode(String eventsJson) throws IOException, InterruptedException {
        return HexFormat.of().parseHex(run("encode", eventsJson).strip());
    }

    private static String run(String... args) throws IOException, InterruptedException {
        Path script = Files.createTempFile("tfevents", ".py");
        try {
            try (InputStream in = TfEventsPy.class.getResourceAsStream("tfevents.py")) {
                Files.write(script, in.readAllBytes());
            }
            List<String> command = new ArrayList<>(List.of("python3", script.toString()));
            command.addAll(List.of(args));
            Path stdout = Files.createTempFile("tfevents", ".out");
            Path stderr = Files.createTempFile("tfevents", ".err");
            try {
                Process p = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
                p.getOutputStream().close();
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new AssertionError("tfevents.py " + args[0] + " did not end within 60 s");
                }
                if (p.exitValue() != 0) {
                    throw new AssertionError("tfevents.py " + String.join(" ", args) + " failed (exit " + p.exitValue()
                            + "): " + Files.readString(stderr));
                }
                return Files.readString(stdout);
            } finally {
                Files.deleteIfExists(stdout);
                Files.deleteIfExists(stderr);
            }
        } finally {
            Files.deleteIfExists(script);
        }
    }
}
