package org.fleet4j.examples;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --log_dir} of every built-in program that writes results ({@code @Mixin}). */
final class LogDirOption {
    @Option(names = "--log_dir", description = "where summary.json and the charts, if any, go (default: FLEET_LOG_DIR or log)")
    private String dir;

    /** The folder results go to: the flag's, else FLEET_LOG_DIR (which fleetrun sets), else {@code log}. */
    Path folder() {
        return Path.of(dir != null ? dir : System.getenv().getOrDefault("FLEET_LOG_DIR", "log"));
    }
}
