package org.fleet4j.fleet;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.strategy.KnobReader;
import org.fleet4j.strategy.KnobUse;
import org.fleet4j.strategy.StrategySchema;

/**
 * The knobs the runtime reads outside the compiler's passes, in one place: the executor's ({@link ExecutionSettings}),
 * the mode {@link Fleet#init} runs (collective, or ps in sync mode over grpc or grpc++), the rings it opens ({@link RingLayout#KNOBS}) and how
 * {@link DistributedOptimizer} scales gradients. With the passes' ({@code org.fleet4j.compiler.PassKnobs}), these are
 * the knobs in effect.
 */
public final class RuntimeKnobs implements KnobReader {
    @Override
    public String reader() {
        return "executor and Fleet";
    }

    @Override
    public List<KnobUse> knobs() {
        List<KnobUse> knobs = new ArrayList<>(ExecutionSettings.KNOBS);
        knobs.add(KnobUse.any(StrategySchema.MODE));
        // parameter-server mode: sync (a_sync false) over grpc or grpc++; async, half-async and geo are later work
        knobs.add(KnobUse.only(StrategySchema.A_SYNC, false));
        knobs.add(new KnobUse(StrategySchema.PROTOCOL, v -> v.equals("grpc") || v.equals("grpc++"), "grpc, grpc++"));
        knobs.add(KnobUse.any(StrategySchema.GRADIENT_SCALE_STRATEGY));
        RingLayout.KNOBS.forEach(f -> knobs.add(KnobUse.any(f)));
        return List.copyOf(knobs);
    }
}
