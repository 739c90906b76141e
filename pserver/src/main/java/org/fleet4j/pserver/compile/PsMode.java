package org.fleet4j.pserver.compile;

import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;

/**
 * How workers and servers meet, from the strategy as Paddle reads it: {@code a_sync: false} is sync (one update per
 * step from all workers' gradients), {@code a_sync: true} is async, or geo when {@code a_sync_configs.k_steps > 0}.
 */
public enum PsMode {
    SYNC("sync"),
    ASYNC("async"),
    GEO("geo");

    private final String spelling;

    PsMode(String spelling) {
        this.spelling = spelling;
    }

    public String spelling() {
        return spelling;
    }

    /** The mode of a {@code mode: ps} strategy; any other mode fails, naming it. */
    public static PsMode of(DistributedStrategy strategy) {
        if (strategy.mode() != Mode.PS) {
            throw new PsCompileException("the parameter-server compile step needs mode ps, but the strategy's mode is "
                    + strategy.mode().spelling() + "; set mode: ps");
        }
        if (!strategy.aSync()) {
            return SYNC;
        }
        return strategy.aSyncConfigs().kSteps() > 0 ? GEO : ASYNC;
    }
}
