package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

class CommandLineSplitTest {
    private static final CommandSpec SPEC = new CommandLine(new LaunchOptions()).getCommandSpec();

    private static CommandLineSplit split(String... args) {
        return CommandLineSplit.of(args, SPEC);
    }

    @Test
    void programIsTheFirstWordThatIsNoOptionValue() {
        CommandLineSplit split = split("--nproc_per_node", "2", "--dry_run", "--log_dir=out", "com.acme.Train", "--nproc_per_node", "3");

        assertEquals(List.of("--nproc_per_node", "2", "--dry_run", "--log_dir=out"), split.launcherArgs());
        assertEquals("com.acme.Train", split.program());
        assertEquals(List.of("--nproc_per_node", "3"), split.programArgs());
    }

    @Test
    void doubleDashEndsTheLauncherOptions() {
        CommandLineSplit split = split("--job_id", "--", "--", "-weird.jar", "--", "x");

        assertEquals(List.of("--job_id", "--"), split.launcherArgs(), "an option's value may itself be --");
        assertEquals("-weird.jar", split.program());
        assertEquals(List.of("--", "x"), split.programArgs());
        assertEquals(List.of("--job_id", "--", "--", "-weird.jar"), List.of(split.forParser()));
    }

    @Test
    void noProgram() {
        CommandLineSplit split = split("--nproc_per_node", "2");

        assertEquals(null, split.program());
        assertEquals(List.of("--nproc_per_node", "2"), List.of(split.forParser()));
    }
}
