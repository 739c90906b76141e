package org.fleet4j.launch;

/** The launcher's runs of free ports ({@link org.fleet4j.cluster.FreePorts}), a failure worded for the command line. */
final class FreePorts {
    private FreePorts() {
    }

    /** First port of {@code count} consecutive ports that were all free a moment ago, below the ephemeral range. */
    static int consecutive(int count) {
        try {
            return org.fleet4j.cluster.FreePorts.consecutive(count);
        } catch (IllegalStateException e) {
            throw new LaunchException(e.getMessage() + "; pass --start_port", e);
        }
    }
}
