package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Tensor;

/**
 * Runs programs on the CPU: binds persistable vars to the scope, feeds inputs without copying, runs each op's
 * kernel and returns copies of the fetched vars. Ops between {@code conditional_begin(Cond)} and its
 * {@code conditional_end} run only when Cond is non-zero (gradient merge updates once every k steps). The plan of a
 * program is prepared once and reused until the program changes.
 *
 * <p>{@link ExecutorOptions} choose how: with one thread (the default) ops run in program order on the caller's
 * thread. With more, a plan first runs in program order until each of its ops has run once, which shows which vars
 * share memory; from then on each op runs as soon as the ops it depends on are done ({@link DependencyGraph}), on the
 * caller and {@code numThreads - 1} worker threads, with the results of program order. Close an executor with
 * worker threads when done with it.
 */
public final class Executor implements AutoCloseable {
    private final Map<Program, Plan> plans = new IdentityHashMap<>();
    private final List<OpObserver> observers = new ArrayList<>();
    private final ExecutorOptions options;
    private final ExecContext context;
    private ParallelRunner runner;

    /** One thread, program order: {@link ExecutorOptions#defaults()}; no job's context (no collective ops). */
    public Executor() {
        this(ExecutorOptions.defaults());
    }

    /** An executor of programs without collective ops: its kernels get {@link ExecContext#none()}. */
    public Executor(ExecutorOptions options) {
        this(options, ExecContext.none());
    }

    /** An executor whose kernels are made with {@code context}: the rings, placements and services of a job. */
    public Executor(ExecutorOptions options, ExecContext context) {
        this.options = options;
        this.context = context;
    }

    public ExecutorOptions options() {
        return options;
    }

    public ExecContext context() {
        return context;
    }

    /** Told the start and end of every op, e.g. to write a timeline; called from the thread that runs the op. */
    public interface OpObserver {
        void opStarted(int index, String type);

        void opFinished(int index, String type);
    }

    public void addObserver(OpObserver o) {
        observers.add(o);
    }

    /** Runs a program with no feed and no fetch (a startup program) once, whatever the iterations per run. */
    public void run(Program program, Scope scope) {
        run(program, scope, Map.of(), List.of(), 1);
    }

    /**
     * Runs one step, or {@link ExecutorOptions#iterationsPerRun()} steps on the same feed. Feeds are bound, not
     * copied: a fed tensor must not change until the call returns. Returns each fetched var by name as the last
     * step left it (copies, safe to keep).
     */
    public Map<String, Tensor> run(Program program, Scope scope, Map<String, Tensor> feed, List<String> fetch) {
        return run(program, scope, feed, fetch, options.iterationsPerRun());
    }

    private Map<String, Tensor> run(Program program, Scope scope, Map<String, Tensor> feed, List<String> fetch,
                                    int iterations) {
        Plan plan = plans.get(program);
        if (plan == null || plan.isStale()) {
            plan = new Plan(program, context);
            plans.put(program, plan);
        }
        Block block = program.globalBlock();
        Object[] frame = plan.frame;
        for (int s : plan.persistable) {
            frame[s] = scope.find(plan.names[s]);
        }
        for (var e : feed.entrySet()) {
            bindFeed(plan, block, e.getKey(), e.getValue());
        }
        for (String name : plan.readFirst) {
            Var v = block.var(name);
            if (v.isData() ? !feed.containsKey(name) : frame[plan.slotOf.get(name)] == null) {
                throw ExecutionException.noValue(v);
            }
        }
        for (String f : fetch) {
            if (!plan.slotOf.containsKey(f)) {
                block.var(f); // throws naming the var, with a suggestion
            }
        }
        boolean dropAfterFetch = false;
        for (int it = 0; it < iterations; it++) {
            execute(plan);
            plan.iterations++;
            int every = options.iterationsPerDropScope();
            if (every > 0 && plan.iterations % every == 0) {
                if (it < iterations - 1) {
                    dropTemporaries(plan);
                } else {
                    dropAfterFetch = true;
                }
            }
        }
        for (int s : plan.persistable) {
            if (frame[s] instanceof Tensor t) {
                scope.put(plan.names[s], t);
            }
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (String f : fetch) {
            Tensor t = plan.tensorAt(f);
            if (t == null) {
                throw new ExecutionException("fetched var '" + f + "' has no value after the run");
            }
            out.put(f, t.copy());
        }
        if (dropAfterFetch) {
            dropTemporaries(plan);
        }
        return out;
    }

    /** One iteration: in program order, or by dependencies once every op of the plan has run. */
    private void execute(Plan plan) {
        if (!options.parallel()) {
            runSteps(plan, null);
        } else if (plan.unrun > 0) {
            runSteps(plan, plan.ranOnce);
        } else {
            int[] classes = StorageClasses.of(plan.frame);
            if (plan.graph == null || !plan.graph.covers(classes)) {
                int[] merged = plan.graph == null ? classes : StorageClasses.merge(plan.graph.classOf, classes);
                plan.graph = new DependencyGraph(plan, merged, options.backwardOptimizerOpDeps());
            }
            if (runner == null) {
                runner = new ParallelRunner(options.numThreads());
            }
            runner.run(plan, plan.graph, this::runStep);
        }
    }

    /**
     * Releases the temporaries' buffers to the garbage collector; the next iteration takes those it has not freed yet
     * back (DroppedBuffers) and allocates the rest anew.
     */
    private void dropTemporaries(Plan plan) {
        List<Tensor> released = new ArrayList<>();
        List<Tensor> kept = new ArrayList<>();
        for (int s : plan.temporaries) {
            if (plan.frame[s] instanceof Tensor t) {
                // placed memory (a registered gradient bucket) stays with its kernel and its allocator
                (context.placements().holds(t) ? kept : released).add(t);
            }
            plan.frame[s] = null;
        }
        for (Object value : plan.frame) {
            if (value instanceof Tensor t) {
                kept.add(t); // persistables and feeds: a temporary that shares their storage must not be handed out
            }
        }
        plan.dropped.give(released, kept);
    }


    private void bindFeed(Plan plan, Block block, String name, Tensor t) {
        ExecutionException.checkFeed(block, name, t);
        plan.frame[plan.slotOf.get(name)] = t;
    }

    /** Runs the steps in program order; marks each that ran in {@code ran} unless it is null. */
    private void runSteps(Plan plan, boolean[] ran) {
        boolean observed = !observers.isEmpty();
        Plan.Step[] steps = plan.steps;
        for (int i = 0; i < steps.length; i++) {
            Plan.Step step = steps[i];
            if (step.skipTo() >= 0 && !isTrue(plan.frame[step.condSlot()])) {
                i = step.skipTo();
                continue;
            }
            if (observed) {
                observers.forEach(o -> o.opStarted(step.index(), step.op().type()));
            }
            try {
                step.kernel().run(step.args());
            } catch (RuntimeException e) {
                throw failed(step, e);
            }
            if (observed) {
                observers.forEach(o -> o.opFinished(step.index(), step.op().type()));
            }
            if (ran != null && !ran[i]) {
                ran[i] = true;
                plan.unrun--;
            }
        }
    }

    /** One op for the parallel runner, with the same observers and messages as {@link #runSteps}. */
    private void runStep(Plan.Step step) {
        for (OpObserver o : observers) {
            o.opStarted(step.index(), step.op().type());
        }
        try {
            step.kernel().run(step.args());
        } catch (RuntimeException e) {
            throw failed(step, e);
        }
        for (OpObserver o : observers) {
            o.opFinished(step.index(), step.op().type());
        }
    }

    /** A kernel's failure with its op named (an execution error names it already). */
    private static RuntimeException failed(Plan.Step step, RuntimeException e) {
        return switch (e) {
            case ExecutionException named -> named;
            case OffHeapMemoryException memory -> memory.in("op #" + step.index() + " " + step.op().type());
            default -> new ExecutionException("op #" + step.index() + " " + step.op() + " failed: " + e.getMessage(), e);
        };
    }

    /** A condition value: a tensor whose first element is non-zero. */
    static boolean isTrue(Object cond) {
        return cond instanceof Tensor t && t.numel() > 0 && t.getDouble(0) != 0;
    }

    /**
     * Bytes of the temporaries (vars neither persistable nor fed) that the prepared plan of {@code program} holds
     * between runs: the executor's working memory for it, each storage counted once. 0 before its first run.
     */
    public long temporaryBytes(Program program) {
        Plan plan = plans.get(program);
        if (plan == null) {
            return 0;
        }
        Block block = program.globalBlock();
        Map<Long, Long> storage = new java.util.HashMap<>();
        for (int s = 0; s < plan.names.length; s++) {
            Var v = block.findVar(plan.names[s]);
            if (v != null && !v.persistable() && !v.isData() && plan.frame[s] instanceof Tensor t) {
                storage.merge(t.segment().address(), t.byteSize(), Math::max);
            }
        }
        return storage.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Forgets prepared plans (and the temporaries they hold). */
    public void clear() {
        plans.clear();
    }

    /** Stops the worker threads, if any; the executor must not run programs afterwards. */
    @Override
    public void close() {
        if (runner != null) {
            runner.close();
        }
    }
}
