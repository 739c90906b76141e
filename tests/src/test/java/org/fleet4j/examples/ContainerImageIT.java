package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The container image ({@code build/image/fleet4j.tar}, made by scripts/image/base.sh and {@code ./mvnw -Pimage
 * package}, which scripts/test.sh runs): its layers unpacked in order into a root file system, and its entrypoint run
 * there as a container runtime would, with the image's environment, in a mount and PID namespace of its own
 * ({@code unshare}) rooted in it ({@code chroot}): {@code bin/fleetrun --help}, and a one-rank mnist on the image's
 * jlink'd JDK with OpenBLAS. Skipped, saying why, where the image could not be built (not root, no debootstrap).
 */
class ContainerImageIT {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path IMAGE = ROOT.resolve("build/image/fleet4j.tar");
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);

    /** Not a @TempDir: the image's root holds links to absolute paths, and is removed without following any. */
    private static Path work;
    private static Path rootfs;
    private static JsonNode config;

    @BeforeAll
    static void unpackTheImage() throws Exception {
        Path skipped = ROOT.resolve("build/image/SKIPPED");
        Assumptions.assumeFalse(Files.exists(skipped) && !Files.exists(IMAGE), () -> "the image was not built: "
                + read(skipped).strip());
        Assumptions.assumeTrue(Files.exists(IMAGE), "no image at " + IMAGE + ": build it with scripts/image/base.sh &&"
                + " ./mvnw -Pimage package -DskipTests (scripts/test.sh does)");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "unpacking the image and chroot into it"
                + " need root; the image test is skipped for " + System.getProperty("user.name"));
        work = Files.createTempDirectory("fleet4j-image-test");
        Path image = Files.createDirectories(work.resolve("image"));
        run(List.of("tar", "-xf", IMAGE.toString(), "-C", image.toString()), Duration.ofMinutes(2));
        JsonNode manifest = new ObjectMapper().readTree(image.resolve("manifest.json").toFile()).get(0);
        config = new ObjectMapper().readTree(image.resolve(manifest.get("Config").asText()).toFile()).get("config");
        rootfs = Files.createDirectories(work.resolve("rootfs"));
        for (JsonNode layer : manifest.get("Layers")) {
            // the base's and Jib's layers add files only (no whiteouts), so unpacking them in order is the image
            run(List.of("tar", "-xzf", image.resolve(layer.asText()).toString(), "-C", rootfs.toString()), Duration.ofMinutes(2));
        }
    }

    /** rm -rf --one-file-system: never into a mount, never through a link. */
    @AfterAll
    static void removeTheUnpackedImage() throws Exception {
        if (work != null) {
            run(List.of("rm", "-rf", "--one-file-system", work.toString()), Duration.ofMinutes(1));
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(" + file + " unreadable: " + e.getMessage() + ")";
        }
    }

    /** Runs the image's entrypoint with {@code args} in the unpacked root, as a container would; returns its output. */
    private static String inContainer(List<String> args, int expectedCode) throws Exception {
        List<String> env = new ArrayList<>();
        config.get("Env").forEach(e -> env.add(e.asText()));
        List<String> inside = new ArrayList<>(List.of("/usr/bin/env", "-i"));
        inside.addAll(env);
        inside.add("FLEET_BLAS=openblas"); // fail, not fall back, where the image has no OpenBLAS
        config.get("Entrypoint").forEach(e -> inside.add(e.asText()));
        inside.addAll(args);
        String script = "set -e; mount --rbind /dev \"$0/dev\"; mount -t proc proc \"$0/proc\"; cd \"$0\";"
                + " exec chroot \"$0\" sh -c 'cd " + config.get("WorkingDir").asText() + " && exec \"$@\"' sh \"$@\"";
        List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork", "--propagation", "private",
                "sh", "-c", script, rootfs.toString()));
        command.addAll(inside);
        Path out = Files.createTempFile(work, "container", ".out");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError("the container still ran after " + RUN_TIMEOUT + ":\n" + Files.readString(out));
        }
        String output = Files.readString(out);
        assertEquals(expectedCode, p.exitValue(), String.join(" ", args) + " in the image:\n" + output);
        return output;
    }

    private static void run(List<String> command, Duration timeout) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " failed: " + out);
        }
    }

    @Test
    void theImageRunsOnItsOwnJlinkedJdkWithoutTheBuildMachinesFiles() throws Exception {
        String release = Files.readString(rootfs.resolve("opt/java/jdk-25/release"));
        assertTrue(release.contains("JAVA_VERSION=\"25"), release);
        assertTrue(release.contains("jdk.incubator.vector") && !release.contains("jdk.compiler"), "a jlink'd runtime of"
                + " the modules Fleet4J uses, not a whole JDK: " + release);
        assertTrue(Files.exists(rootfs.resolve("usr/lib/x86_64-linux-gnu/libopenblas.so.0"))
                || Files.exists(rootfs.resolve("usr/lib/aarch64-linux-gnu/libopenblas.so.0")), "OpenBLAS in the image");
        assertFalse(Files.exists(rootfs.resolve("opt/fleet4j/build")), "the jars are in Jib's layout, not build/lib");
    }

    @Test
    void fleetrunHelpListsTheBuiltInPrograms() throws Exception {
        String help = inContainer(List.of("--help"), 0);
        assertTrue(help.contains("Usage: bin/fleetrun [OPTIONS] PROGRAM") && help.contains("mnist"), help);
    }

    @Test
    void aOneRankMnistTrainsInTheImage() throws Exception {
        String out = inContainer(List.of("--nproc_per_node", "1", "--log_dir", "/tmp/log", "mnist", "--steps", "20",
                "--global_batch", "64", "--optimizer", "sgd"), 0);
        assertTrue(out.contains("BLAS: OpenBLAS"), "mnist runs its matrix products on the image's OpenBLAS:\n" + out);
        JsonNode summary = new ObjectMapper().readTree(rootfs.resolve("tmp/log/summary.json").toFile());
        assertEquals(1, summary.get("world_size").asInt(), summary.toString());
        assertTrue(summary.get("final_loss").asDouble() < 2.0, "20 SGD steps train: " + summary);
    }
}
