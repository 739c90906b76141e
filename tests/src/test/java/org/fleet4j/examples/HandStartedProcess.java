package org.fleet4j.examples;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.launch.LaunchPlan;

/**
 * A process of a job started by hand, without a launcher: {@link SyncPsProgram} from its jar on build/lib's classpath,
 * with only the variables the test gives (no inherited FLEET_* or PADDLE_*), its output in DIR/NAME.out.
 */
final class HandStartedProcess {
    private HandStartedProcess() {
    }

    static Process start(Path jar, Path dir, String name, Map<String, String> common, Map<String, String> own,
                         String... programArgs) throws IOException {
        Path lib = Path.of("").toAbsolutePath().getParent().resolve("build/lib");
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow()));
        command.addAll(LaunchPlan.REQUIRED_JVM_FLAGS);
        command.addAll(List.of("-XX:+UseSerialGC", "-Xmx512m", "-cp", lib + File.separator + "*" + File.pathSeparator + jar,
                SyncPsProgram.class.getName()));
        command.addAll(List.of(programArgs));
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".out").toFile());
        b.environment().keySet().removeIf(k -> k.startsWith("FLEET_") || k.startsWith("PADDLE_") || k.equals("CLASSPATH"));
        b.environment().putAll(common);
        b.environment().putAll(own);
        return b.start();
    }
}
