package org.fleet4j.collective.group;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The warning a rank logs, once per operation, when the operation has waited for its peers for a fraction of the
 * group's timeout ({@link #after}), as Horovod's stall inspector does: which operation, its sequence number, the group,
 * and the peers it has not heard from. A stalled peer (stopped, swapping, stuck in a long step) is then named long
 * before the timeout; the wait goes on, and only the timeout fails the operation. A backend's wait loops call
 * {@link #check}; {@link #nanosUntilDue} tells a blocking wait when to wake for it.
 */
public final class StallWarning {
    private static final System.Logger LOG = System.getLogger(StallWarning.class.getName());
    /** Horovod's stall inspector warns after 60 s. */
    private static final Duration LONGEST = Duration.ofSeconds(60);

    private final GroupContext ctx;
    private final OpCall call;
    private final long dueNanos;
    private boolean warned;

    /** For {@code call} on {@code ctx}, started at {@code startNanos} ({@link System#nanoTime()}). */
    StallWarning(GroupContext ctx, OpCall call, long startNanos) {
        this.ctx = ctx;
        this.call = call;
        this.dueNanos = startNanos + after(ctx.options().timeout()).toNanos();
    }

    /** How long an operation waits before it warns: a third of the timeout, at most 60 s. */
    public static Duration after(Duration timeout) {
        Duration third = timeout.dividedBy(3);
        return third.compareTo(LONGEST) < 0 ? third : LONGEST;
    }

    /**
     * At {@code now}, warns once the warning is due; {@code waitingFor} says for whom the operation waits ("ranks [1]
     * (phase 'arrive')"), and is asked only then.
     */
    public void check(long now, Supplier<String> waitingFor) {
        if (warned || now - dueNanos < 0) {
            return;
        }
        warned = true;
        LOG.log(System.Logger.Level.WARNING, "rank " + ctx.rank() + " of group '" + ctx.name() + "' (" + ctx.size()
                + " ranks): " + call + " has waited " + seconds(after(ctx.options().timeout())) + " for "
                + waitingFor.get() + "; still waiting, up to " + seconds(ctx.options().timeout()) + " in all"
                + " (FLEET_TIMEOUT), before it fails");
    }

    /** Nanoseconds from {@code now} until the warning is due (0: it is); {@link Long#MAX_VALUE} once it is written. */
    public long nanosUntilDue(long now) {
        return warned ? Long.MAX_VALUE : Math.max(0, dueNanos - now);
    }

    private static String seconds(Duration d) {
        long millis = d.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + " s" : String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
    }
}
