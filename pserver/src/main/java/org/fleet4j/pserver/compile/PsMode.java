package org.fleet4j.pserver.compile;

import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * How workers and servers meet, from the strategy as Paddle reads it: {@code a_sync: false} is sync (one update per
 * step from all workers' gradients); with {@code a_sync: true}, {@code a_sync_configs.k_steps > 0} is geo, and
 * otherwise {@code a_sync_configs.runtime_split_send_recv} chooses async ({@code true}) or half-async ({@code false}),
 * the rule of Paddle's DistributeTranspiler (sync_mode, then runtime_split_send_recv, else half-async).
 */
public enum PsMode {
    SYNC("sync"),
    ASYNC("async"),
    HALF_ASYNC("half-async"),
    GEO("geo");

    private final String spelling;

    PsMode(String spelling) {
        this.spelling = spelling;
    }

    public String spelling() {
        return spelling;
    }

    /** Whether a step of the worker program ends waiting for every worker (the op send_barrier's barrier). */
    public boolean barrierPerStep() {
        return this == SYNC || this == HALF_ASYNC;
    }

    /** The mode of a {@code mode: ps} strategy; any other mode fails, naming it. */
    public static PsMode of(DistributedStrategy strategy) {
        if (strategy.mode() != Mode.PS) {
            throw new PsCompileException("the parameter-server compile step needs mode ps, but the strategy's mode is "
                    + strategy.mode().spelling() + "; set mode: ps");
        }
        int kSteps = strategy.get(StrategySchema.ASYNC_K_STEPS);
        if (!strategy.get(StrategySchema.A_SYNC)) {
            if (kSteps > 0) {
                throw new PsCompileException("a_sync_configs.k_steps " + kSteps + " asks for geo mode, which needs"
                        + " a_sync: true; set a_sync: true for geo, or k_steps: -1 for sync mode");
            }
            return SYNC;
        }
        if (kSteps > 0) {
            return GEO;
        }
        return strategy.get(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV) ? ASYNC : HALF_ASYNC;
    }
}
