package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code bin/fleetrun} script. It runs from build/lib, which the examples module fills when it is packaged,
 * before this module's integration tests run.
 */
class BinFleetrunIT {
    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    private static final Path SCRIPT = REPO.resolve("bin/fleetrun");

    @TempDir
    Path work;

    @Test
    void runsAJobFromBuildLib() throws Exception {
        assertBuildLibHasTheLauncher();
        Path probeDir = Files.createDirectories(work.resolve("probe"));
        // The script puts CLASSPATH after build/lib, which is how the test's probe program reaches the ranks.
        Map<String, String> env = Map.of("PROBE_DIR", probeDir.toString(), "CLASSPATH", codeSourceOf(RoleProbe.class).toString());
        LauncherRun launcher = LauncherRun.start(List.of(SCRIPT.toString(), "--nproc_per_node", "2",
                "--jvm_args", "-XX:TieredStopAtLevel=1 -Xmx64m", RoleProbe.class.getName(), "--epochs", "3"), work, env);

        assertEquals(0, launcher.awaitExit(Duration.ofSeconds(60)), launcher.stderr());
        assertTrue(launcher.stdout().contains("[rank 0] hello from rank 0 of 2"), launcher.stdout());
        assertTrue(Files.readString(work.resolve("log/workerlog.1")).contains("hello from rank 1 of 2"));
        String role = Files.readString(probeDir.resolve("rank-1.role"));
        assertTrue(role.contains("args.0=--epochs") && role.contains("args.1=3"), role);
        assertTrue(role.contains("classpath=" + REPO.resolve("build/lib").toString().replace(":", "\\:")), "ranks run from build/lib: " + role);
        try (Stream<Path> pids = Files.list(probeDir)) {
            for (Path pid : pids.filter(f -> f.toString().endsWith(".pid")).toList()) {
                assertTrue(Await.gone(Long.parseLong(Files.readString(pid).trim()), Duration.ofSeconds(10)), pid + " outlived the job");
            }
        }
    }

    /** The dry run of a GPU world, on any machine: where each op of mnist's compiled program would run. */
    @Test
    void theDryRunOfAGpuWorldSaysWhereEachOpRuns() throws Exception {
        assertBuildLibHasTheLauncher();
        LauncherRun launcher = LauncherRun.start(List.of(SCRIPT.toString(), "--nproc_per_node", "2", "--devices", "gpu",
                "--dry_run", "mnist"), work, Map.of());

        assertEquals(0, launcher.awaitExit(Duration.ofSeconds(90)), launcher.stderr());
        String out = launcher.stdout();
        assertTrue(out.contains("fleet: where the ops would run on gpu:"), out);
        assertTrue(out.matches("(?s).*gpu +matmul_grad +x3 +gpu kernel\\n.*"), out);
        assertTrue(out.matches("(?s).*gpu +momentum +x6 +gpu kernel \\(weight_decay 0\\)\\n.*"), out);
        assertTrue(out.matches("(?s).*host fallback +uniform_random +x3 +an initialiser: runs once.*"), out);
        assertTrue(!out.contains("CANNOT RUN"), out);
        assertTrue(out.contains("fleet: dry run: the compiled program is what the 2 ranks would run; nothing ran"), out);
    }

    @Test
    void badFlagThroughTheScriptExitsWith2() throws Exception {
        assertBuildLibHasTheLauncher();
        LauncherRun launcher = LauncherRun.start(List.of(SCRIPT.toString(), "--nproc_per_node", "two", "mnist"), work, Map.of());

        assertEquals(2, launcher.awaitExit(Duration.ofSeconds(30)));
        assertTrue(launcher.stderr().contains("fleetrun: Invalid value for option '--nproc_per_node': 'two' is not an int"), launcher.stderr());
        assertTrue(!launcher.stderr().contains("\tat "), "no stack trace: " + launcher.stderr());
    }

    @Test
    void missingBuildLibSaysHowToBuild() throws Exception {
        Path copy = Files.createDirectories(work.resolve("checkout/bin")).resolve("fleetrun");
        Files.copy(SCRIPT, copy);
        assertTrue(copy.toFile().setExecutable(true));
        // A JDK 25 is found first (the one running this test), so the missing jars are what is reported.
        LauncherRun launcher = LauncherRun.start(List.of(copy.toString(), "mnist"), work,
                Map.of("JAVA_HOME", System.getProperty("java.home")));

        assertEquals(2, launcher.awaitExit(Duration.ofSeconds(30)));
        assertTrue(launcher.stderr().contains(work.resolve("checkout/build/lib") + " has no Fleet4J jars; build them first: (cd "
                + work.resolve("checkout") + " && ./mvnw -q package -DskipTests)"), launcher.stderr());
    }

    @Test
    void withoutAJdk25ItSaysWhereItLookedAndHowToInstallOne() throws Exception {
        Path jdk17 = fakeJdk17();
        LauncherRun launcher = LauncherRun.start(List.of(bash(), SCRIPT.toString(), "mnist"), work, Map.of(
                "PATH", toolsWithoutJava().toString(), "JAVA_HOME", work.resolve("missing").toString(),
                "FLEETRUN_JDK_DIRS", jdk17.toString()));

        assertEquals(2, launcher.awaitExit(Duration.ofSeconds(30)), launcher.stderr());
        String err = launcher.stderr();
        assertTrue(err.startsWith("fleetrun: Fleet4J needs a JDK 25 or newer and found none. Looked at:\n"), err);
        assertTrue(err.contains("  JAVA_HOME: " + work.resolve("missing/bin/java") + " (not a working java)\n"), err);
        assertTrue(err.contains("  JDK folder: " + jdk17 + " (version 17)\n"), err);
        assertTrue(err.contains("https://adoptium.net"), err);
    }

    @Test
    void newestJdkInTheSearchedFoldersIsTaken() throws Exception {
        Path checkout = Files.createDirectories(work.resolve("checkout/bin"));
        Files.copy(SCRIPT, checkout.resolve("fleetrun"));
        Path thisJdk = Path.of(System.getProperty("java.home"));
        LauncherRun launcher = LauncherRun.start(List.of(bash(), checkout.resolve("fleetrun").toString(), "mnist"), work, Map.of(
                "PATH", toolsWithoutJava().toString(), "JAVA_HOME", work.resolve("missing").toString(),
                "FLEETRUN_JDK_DIRS", fakeJdk17() + ":" + thisJdk));

        assertEquals(2, launcher.awaitExit(Duration.ofSeconds(30)), launcher.stderr());
        // Past the JDK search: what stops it now is the missing build of this copy.
        assertTrue(launcher.stderr().contains("has no Fleet4J jars; build them first"), launcher.stderr());
    }

    /** A JDK home that says it is 17, the way the script reads versions: its release file. */
    private Path fakeJdk17() throws IOException {
        Path home = work.resolve("jdk-17");
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"17.0.2\" 2022-01-18' >&2\n");
        assertTrue(java.toFile().setExecutable(true));
        Files.writeString(home.resolve("release"), "JAVA_VERSION=\"17.0.2\"\n");
        return home;
    }

    /** A PATH with the tools the script uses and no java on it. */
    private Path toolsWithoutJava() throws IOException {
        Path tools = Files.createDirectories(work.resolve("tools"));
        for (String tool : List.of("dirname", "readlink", "sed")) {
            Path link = tools.resolve(tool);
            if (!Files.exists(link)) {
                Files.createSymbolicLink(link, systemTool(tool));
            }
        }
        return tools;
    }

    private static String bash() {
        return systemTool("bash").toString();
    }

    private static Path systemTool(String name) {
        return Stream.of("/usr/bin", "/bin").map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst()
                .orElseThrow(() -> new AssertionError(name + " not found in /usr/bin or /bin"));
    }

    /** build/lib must hold the launcher: the examples module packaged it earlier in this build. */
    private static void assertBuildLibHasTheLauncher() throws IOException {
        assertTrue(apiJar().isPresent(), REPO.resolve("build/lib") + " has no fleet4j-api jar: the examples module's package"
                + " phase fills it before these integration tests run (./mvnw verify)");
    }

    /** The jar or folder a class was loaded from: the fleet-api test jar, which the ranks need for the probe. */
    private static Path codeSourceOf(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static Optional<Path> apiJar() throws IOException {
        Path lib = REPO.resolve("build/lib");
        if (!Files.isDirectory(lib)) {
            return Optional.empty();
        }
        try (Stream<Path> jars = Files.list(lib)) {
            return jars.filter(p -> p.getFileName().toString().matches("fleet4j-api-.*\\.jar")).findFirst();
        }
    }
}
