/**
 * How every built-in program's command line behaves: {@link ProgramMain#run} parses it with picocli, turns a bad flag
 * or bad input into one line and status 2 (the stack trace only with {@code --log_level debug}), and a dry run's
 * {@code DryRunFinished} into status 0; {@link LogLevelOption} is the shared {@code --log_level} option. It returns the
 * status for the program's {@code main} to exit with. It imports the {@code fleet} root (DryRunFinished),
 * {@code org.fleet4j.launch} (LogLevel), fleet-core's {@code tensor} and picocli.
 */
package org.fleet4j.fleet.cli;
