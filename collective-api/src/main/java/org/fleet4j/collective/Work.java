package org.fleet4j.collective;

import java.time.Duration;
import java.util.Optional;

/**
 * Handle on one issued operation of a {@link ProcessGroup}: done or not, its failure, and a bounded wait for it.
 * Operations of a group run one at a time in issue order.
 */
public interface Work {
    boolean isDone();

    /** The failure, once the operation has failed; empty while it runs or after success. */
    Optional<Throwable> error();

    /**
     * Waits until the operation finishes and rethrows its failure as a {@link CollectiveException}; fails naming the
     * operation when {@code timeout} passes first.
     */
    void await(Duration timeout);
}
