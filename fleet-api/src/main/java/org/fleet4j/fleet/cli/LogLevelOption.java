package org.fleet4j.fleet.cli;

import org.fleet4j.launch.LogLevel;
import picocli.CommandLine.Option;

/**
 * The {@code --log_level} option of every built-in program, one definition for all ({@code @Mixin}): {@code debug}
 * shows a failure's stack trace ({@link ProgramMain} reads it from the arguments before parsing); a value other than
 * debug, info or warn is refused like any bad flag, naming the values allowed, with exit code 2.
 */
public final class LogLevelOption {
    @Option(names = "--log_level", description = "debug, info or warn; debug shows stack traces (default: ${DEFAULT-VALUE})")
    LogLevel level = LogLevel.INFO;

    public LogLevel level() {
        return level;
    }
}
