package org.fleet4j.launch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The launcher's words split from the program's: PROGRAM is the first word that is neither an option
 * nor an option's value (or the word after {@code --}); every word after it belongs to the program,
 * even one that looks like a launcher option.
 *
 * @param program null when the command line names none
 */
record CommandLineSplit(List<String> launcherArgs, String program, List<String> programArgs) {
    static CommandLineSplit of(String[] args, CommandSpec spec) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) {
                return at(args, i, i + 1);
            }
            if (arg.startsWith("-") && arg.length() > 1) {
                OptionSpec option = arg.contains("=") ? null : spec.findOption(arg);
                if (option != null && option.arity().min() > 0) {
                    i++;
                }
                continue;
            }
            return at(args, i, i);
        }
        return new CommandLineSplit(List.of(args), null, List.of());
    }

    private static CommandLineSplit at(String[] args, int launcherEnd, int programAt) {
        List<String> launcher = Arrays.asList(args).subList(0, launcherEnd);
        if (programAt >= args.length) {
            return new CommandLineSplit(launcher, null, List.of());
        }
        return new CommandLineSplit(launcher, args[programAt], Arrays.asList(args).subList(programAt + 1, args.length));
    }

    CommandLineSplit {
        launcherArgs = List.copyOf(launcherArgs);
        programArgs = List.copyOf(programArgs);
    }

    /** What picocli parses: the launcher's words, then PROGRAM after {@code --} so it is never taken for an option. */
    String[] forParser() {
        List<String> words = new ArrayList<>(launcherArgs);
        if (program != null) {
            words.add("--");
            words.add(program);
        }
        return words.toArray(String[]::new);
    }
}
