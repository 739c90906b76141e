package org.fleet4j.fleet;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.fleet4j.compiler.RingLayout;
import org.fleet4j.strategy.schema.KnobReader;
import org.fleet4j.strategy.schema.KnobUse;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The knobs the runtime reads outside the compiler's passes, in one place: the executor's ({@link ExecutionSettings}),
 * the mode {@link Fleet#init} runs (collective, or ps in any of its modes over grpc, grpc++, star_server or star_server_lite, with tensor_fuse), the rings it opens ({@link RingLayout#KNOBS}) and how
 * {@link DistributedOptimizer} scales gradients. With the passes' ({@code org.fleet4j.compiler.PassKnobs}), these are
 * the knobs in effect.
 */
@AutoService(KnobReader.class)
public final class RuntimeKnobs implements KnobReader {
    @Override
    public String reader() {
        return "executor and Fleet";
    }

    @Override
    public List<KnobUse> knobs() {
        List<KnobUse> knobs = new ArrayList<>(ExecutionSettings.KNOBS);
        knobs.add(KnobUse.any(StrategySchema.MODE));
        // parameter-server mode over any protocol: sync, async, half-async and geo (PsMode), their communicators' settings
        knobs.add(KnobUse.any(StrategySchema.A_SYNC));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_K_STEPS));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_MAX_MERGE_VAR_NUM));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_SEND_QUEUE_SIZE));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_INDEPENDENT_RECV_THREAD));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_THREAD_POOL_SIZE));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_SEND_WAIT_TIMES));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_RUNTIME_SPLIT_SEND_RECV));
        knobs.add(KnobUse.any(StrategySchema.ASYNC_LAUNCH_BARRIER));
        Set<Object> protocols = Set.of("grpc", "grpc++", "star_server", "star_server_lite");
        knobs.add(new KnobUse(StrategySchema.PROTOCOL, protocols::contains, "grpc, grpc++, star_server, star_server_lite"));
        knobs.add(KnobUse.any(StrategySchema.TENSOR_FUSE));
        knobs.add(KnobUse.any(StrategySchema.GRADIENT_SCALE_STRATEGY));
        RingLayout.KNOBS.forEach(f -> knobs.add(KnobUse.any(f)));
        return List.copyOf(knobs);
    }
}
