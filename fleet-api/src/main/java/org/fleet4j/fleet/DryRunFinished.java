package org.fleet4j.fleet;

/**
 * Thrown by {@link DistributedOptimizer#minimize} in a dry run once the compiler's report is written: the program
 * stops there, as the dry run asks. The launcher's rank main and the built-in programs treat it as success.
 */
public final class DryRunFinished extends RuntimeException {
    public DryRunFinished(String message) {
        super(message, null, false, false);
    }
}
