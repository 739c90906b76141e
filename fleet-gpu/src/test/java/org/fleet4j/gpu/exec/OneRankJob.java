package org.fleet4j.gpu.exec;

import java.time.Duration;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.ops.ExecContext;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A job of one rank whose ring 0 is a real single-rank host group, open while a test class runs (register it as a
 * static extension): what the host fallbacks of a plan's collective ops are made with when a test prepares
 * multi-rank programs in one process.
 */
final class OneRankJob implements BeforeAllCallback, AfterAllCallback {
    private ProcessGroup ring0;
    private ExecContext context;

    @Override
    public void beforeAll(ExtensionContext extension) {
        ring0 = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(Duration.ofSeconds(20)));
        context = ExecContext.builder().ring(0, ring0).build();
    }

    @Override
    public void afterAll(ExtensionContext extension) {
        ring0.close();
    }

    ExecContext context() {
        return context;
    }
}
