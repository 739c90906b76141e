package org.fleet4j.pserver.grpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.fleet4j.text.Quoted;

/**
 * A server's named barriers. Each name has rounds (generations): a round gathers distinct workers until all
 * {@code workers} have come, then releases them all and the next round of that name begins. Waiting holds no thread.
 * When a waiting worker's timeout passes first, the round fails: every worker in it is told which workers did not
 * come. A worker whose call is cancelled (it died, or gave up) leaves its round, so it is not counted.
 */
final class Barriers implements AutoCloseable {
    private final Supplier<String> server;
    private final ScheduledExecutorService timer;
    private final Map<String, Round> rounds = new HashMap<>();
    private final Map<String, Long> generations = new HashMap<>();
    private boolean closed;

    /** {@code server} names the server in messages; {@code timer} runs the timeouts. */
    Barriers(Supplier<String> server, ScheduledExecutorService timer) {
        this.server = server;
        this.timer = timer;
    }

    private record Round(String name, long generation, int workers, Map<Integer, Waiter> waiting) {
        Round(String name, long generation, int workers) {
            this(name, generation, workers, new TreeMap<>());
        }

        String describe() {
            return "barrier " + Quoted.of(name) + " (generation " + generation + ", " + workers + " workers)";
        }
    }

    private static final class Waiter {
        final Consumer<String> done;
        ScheduledFuture<?> timeout;

        Waiter(Consumer<String> done) {
            this.done = done;
        }

        void finish(String why) {
            if (timeout != null) {
                timeout.cancel(false);
            }
            done.accept(why);
        }
    }

    /**
     * Worker {@code worker} of {@code workers} reaches barrier {@code name}. {@code done} is called once, outside any
     * lock: with null when all have come, or with the reason it failed. The returned action takes the worker out of
     * its round (for a cancelled call).
     */
    Runnable arrive(String name, int worker, int workers, Duration timeout, Consumer<String> done) {
        Waiter waiter = new Waiter(done);
        List<Waiter> released = new ArrayList<>();
        Waiter replaced = null;
        String refusal = null;
        Round round;
        synchronized (this) {
            round = rounds.get(name);
            if (closed) {
                refusal = "parameter server " + server.get() + " is stopping";
            } else if (workers <= 0 || worker < 0 || worker >= workers) {
                refusal = "barrier " + Quoted.of(name) + ": worker " + worker + " is not one of " + workers + " workers [0, "
                        + workers + ")";
            } else if (round != null && round.workers() != workers) {
                refusal = round.describe() + ": worker " + worker + " expects " + workers + " workers, the workers "
                        + round.waiting().keySet() + " already waiting expect " + round.workers();
            } else {
                if (round == null) {
                    round = new Round(name, generations.getOrDefault(name, 0L), workers);
                    rounds.put(name, round);
                }
                replaced = round.waiting().put(worker, waiter);
                if (round.waiting().size() == workers) {
                    rounds.remove(name);
                    generations.put(name, round.generation() + 1);
                    released.addAll(round.waiting().values());
                    round.waiting().clear();
                } else {
                    Round r = round;
                    waiter.timeout = timer.schedule(() -> timedOut(r, timeout), timeout.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
        }
        if (refusal != null) {
            done.accept(refusal);
            return () -> { };
        }
        if (replaced != null) {
            replaced.finish(round.describe() + ": worker " + worker + " arrived again before the round ended");
        }
        released.forEach(w -> w.finish(null));
        Round r = round;
        return () -> leave(r, worker, waiter);
    }

    private void timedOut(Round round, Duration timeout) {
        List<Waiter> failed;
        String why;
        synchronized (this) {
            if (round.waiting().isEmpty()) {
                return;
            }
            List<Integer> missing = IntStream.range(0, round.workers())
                    .filter(w -> !round.waiting().containsKey(w)).boxed().toList();
            why = round.describe() + " on parameter server " + server.get() + ": worker"
                    + (missing.size() == 1 ? " " : "s ") + missing + " did not arrive within " + timeout.toMillis()
                    + " ms (arrived: " + round.waiting().keySet() + ")";
            failed = new ArrayList<>(round.waiting().values());
            round.waiting().clear();
            rounds.remove(round.name(), round);
        }
        failed.forEach(w -> w.finish(why));
    }

    private void leave(Round round, int worker, Waiter waiter) {
        synchronized (this) {
            if (!round.waiting().remove(worker, waiter)) {
                return;
            }
            if (round.waiting().isEmpty()) {
                rounds.remove(round.name(), round);
            }
        }
        waiter.timeout.cancel(false);
    }

    /**
     * Each barrier round that workers wait in, naming the workers that have not arrived, for the line a server writes
     * when its process is stopped (a launcher ending the job after a worker died) while workers wait for a missing one.
     */
    synchronized List<String> waits() {
        List<String> waits = new ArrayList<>();
        for (Round r : rounds.values()) {
            if (!r.waiting().isEmpty()) {
                List<Integer> missing = IntStream.range(0, r.workers()).filter(w -> !r.waiting().containsKey(w)).boxed()
                        .toList();
                waits.add(r.describe() + " on parameter server " + server.get() + ": waiting for worker"
                        + (missing.size() == 1 ? " " : "s ") + missing + " (arrived: " + r.waiting().keySet() + ")");
            }
        }
        return waits;
    }

    /** Fails every waiting worker: the server is stopping. */
    @Override
    public void close() {
        List<Waiter> waiting = new ArrayList<>();
        synchronized (this) {
            closed = true;
            rounds.values().forEach(r -> waiting.addAll(r.waiting().values()));
            rounds.clear();
        }
        waiting.forEach(w -> w.finish("parameter server " + server.get() + " is stopping"));
    }
}
