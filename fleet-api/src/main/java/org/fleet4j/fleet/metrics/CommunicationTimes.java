package org.fleet4j.fleet.metrics;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.ops.collective.CollectiveOpTypes;
import org.fleet4j.pserver.compile.PsOpTypes;

/**
 * How long an executor's ops spent communicating, by kind: the collective ops (an allreduce, the wait for an
 * overlapped one, the hierarchical forms' pieces) and the parameter-server pulls and pushes. Ops of other types cost
 * a string switch. With several executor threads the times of ops that ran at once add up.
 */
final class CommunicationTimes implements Executor.OpObserver {
    enum Kind { ALLREDUCE, PS_PULL, PS_PUSH }

    private final LongSupplier clock;
    private final LongAdder[] nanos = new LongAdder[Kind.values().length];
    private final LongAdder[] ops = new LongAdder[Kind.values().length];
    /** When the op now running on this thread started: an executor thread runs one op at a time. */
    private final ThreadLocal<long[]> started = ThreadLocal.withInitial(() -> new long[1]);

    CommunicationTimes(LongSupplier clock) {
        this.clock = clock;
        for (int k = 0; k < nanos.length; k++) {
            nanos[k] = new LongAdder();
            ops[k] = new LongAdder();
        }
    }

    static Kind kindOf(String opType) {
        return switch (opType) {
            case CollectiveOpTypes.ALLREDUCE, CollectiveOpTypes.ALLREDUCE_START, CollectiveOpTypes.WAIT,
                 CollectiveOpTypes.LEADERS_ALLREDUCE, CollectiveOpTypes.REDUCE_SCATTER, CollectiveOpTypes.ALLGATHER,
                 CollectiveOpTypes.BROADCAST, CollectiveOpTypes.REDUCE -> Kind.ALLREDUCE;
            case PsOpTypes.PULL_DENSE, PsOpTypes.PULL_SPARSE, PsOpTypes.PULL_FUSED -> Kind.PS_PULL;
            case PsOpTypes.PUSH_DENSE, PsOpTypes.PUSH_SPARSE, PsOpTypes.PUSH_FUSED, PsOpTypes.SEND_BARRIER -> Kind.PS_PUSH;
            default -> null;
        };
    }

    @Override
    public void opStarted(int index, String type) {
        if (kindOf(type) != null) {
            started.get()[0] = clock.getAsLong();
        }
    }

    @Override
    public void opFinished(int index, String type) {
        Kind kind = kindOf(type);
        if (kind != null) {
            nanos[kind.ordinal()].add(clock.getAsLong() - started.get()[0]);
            ops[kind.ordinal()].increment();
        }
    }

    /** Nanoseconds in ops of {@code kind} so far. */
    long nanos(Kind kind) {
        return nanos[kind.ordinal()].sum();
    }

    /** Ops of {@code kind} run so far. */
    long ops(Kind kind) {
        return ops[kind.ordinal()].sum();
    }
}
