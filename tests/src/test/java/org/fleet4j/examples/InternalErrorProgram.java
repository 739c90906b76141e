package org.fleet4j.examples;

import java.util.concurrent.Callable;
import org.fleet4j.fleet.cli.ProgramMain;
import picocli.CommandLine.Command;

/** A program with a bug: run as every built-in program runs ({@link ProgramMain}), it fails with a NullPointerException. */
@Command(name = "internal_error")
public final class InternalErrorProgram implements Callable<Integer> {
    private String missing;

    public static void main(String[] args) {
        System.exit(ProgramMain.run("internal_error", new InternalErrorProgram(), args));
    }

    @Override
    public Integer call() {
        return missing.length();
    }
}
