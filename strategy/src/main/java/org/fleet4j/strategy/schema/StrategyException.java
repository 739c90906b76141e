package org.fleet4j.strategy.schema;

import java.util.List;

/**
 * A strategy that cannot be used as given. The message is written for the user: one line per
 * problem, each naming the file and line (when there is one), the key, the value and what is allowed.
 */
public final class StrategyException extends RuntimeException {
    private final List<String> problems;

    public StrategyException(String problem) {
        this(List.of(problem));
    }

    public StrategyException(List<String> problems) {
        super(String.join("\n", problems));
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("a StrategyException needs at least one problem");
        }
        this.problems = List.copyOf(problems);
    }

    /** The problems, one user-facing line each. */
    public List<String> problems() {
        return problems;
    }
}
