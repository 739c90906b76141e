package org.fleet4j.gpu.exec;

import java.time.Duration;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.JobRole;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ProcessGroups;
import org.fleet4j.core.ops.ExecContext;

/**
 * A job of one rank whose ring 0 is a real single-rank host group: what the host fallbacks of a plan's collective ops
 * are made with when a test prepares multi-rank programs in one process.
 */
final class OneRankJob implements AutoCloseable {
    private final ProcessGroup ring0 = ProcessGroups.init(JobRole.single(),
            GroupOptions.defaults().withTimeout(Duration.ofSeconds(20)));
    private final ExecContext context = ExecContext.builder().ring(0, ring0).build();

    ExecContext context() {
        return context;
    }

    @Override
    public void close() {
        ring0.close();
    }
}
