package org.fleet4j.pserver.compile;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.ClipOps;
import org.fleet4j.core.optim.Optimizer;
import org.fleet4j.pserver.table.DenseSlicing;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Protocol;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * The PS compile step, a transpiler beside the pass pipeline: from the main program after {@code minimize} (forward,
 * backward, optimizer ops) it makes the worker's programs and the servers' tables.
 * <ul>
 * <li>optimizer ops, their learning-rate schedule and step counter leave the worker; each becomes the optimizer of
 *     its parameter's table on the servers, with the op's hyper-parameters;</li>
 * <li>an {@code is_sparse} {@code lookup_table} becomes {@code pull_sparse} and its gradient op {@code push_sparse}:
 *     the table leaves the worker and becomes a sparse table keyed by the raw ids;</li>
 * <li>every other trained parameter is a dense table: {@code pull_dense} before forward, {@code push_dense} right
 *     after the op that finishes its gradient.</li>
 * </ul>
 * Parameters without an optimizer op stay on the worker. What it cannot transpile fails naming the op.
 */
public final class PsCompiler {
    private PsCompiler() {
    }

    /** The plan for {@code main} (its startup program attached) over {@code servers} servers. */
    public static PsPlan compile(Program main, DistributedStrategy strategy, int servers) {
        return compile(main, strategy, servers, DenseSlicing.DEFAULT_MIN_BLOCK_SIZE);
    }

    public static PsPlan compile(Program main, DistributedStrategy strategy, int servers, long minBlockSize) {
        return transpile(main, strategy, servers, minBlockSize, true);
    }

    /**
     * As {@link #compile(Program, DistributedStrategy, int)}, rewriting {@code main} and its startup program themselves
     * into the worker's programs (the plan's {@code workerMain} and {@code workerStartup} are them): what
     * {@code minimize} does, so the user's programs are the ones that run.
     */
    public static PsPlan compileInPlace(Program main, DistributedStrategy strategy, int servers) {
        return transpile(main, strategy, servers, DenseSlicing.DEFAULT_MIN_BLOCK_SIZE, false);
    }

    private static PsPlan transpile(Program main, DistributedStrategy strategy, int servers, long minBlockSize,
                                    boolean copy) {
        if (servers <= 0) {
            throw new PsCompileException("the parameter-server plan needs at least one server, got " + servers);
        }
        PsMode mode = PsMode.of(strategy);
        Program startup = main.startupProgram();
        if (startup == null) {
            throw new PsCompileException("the program has no startup program; build it with Layers(main, startup)");
        }
        Program worker = copy ? main.copy() : main;
        Program workerStartup = copy ? startup.copy() : startup;
        worker.setStartupProgram(workerStartup);
        Block block = worker.globalBlock();
        List<Op> ops = new ArrayList<>(block.ops());

        Map<String, Float> lrOf = learningRates(ops);
        Map<String, ServerOptimizer> optimizerOf = new LinkedHashMap<>();
        Map<String, String> gradOf = new LinkedHashMap<>();
        Set<String> gone = new HashSet<>();
        for (Op op : ops) {
            if (!op.inputs().containsKey("Param") || !op.inputs().containsKey("Grad")) {
                continue;
            }
            String param = op.in("Param");
            String lrVar = op.in("LearningRate");
            Float lr = lrOf.get(lrVar);
            if (lr == null) {
                throw new PsCompileException("optimizer op " + op.type() + " (parameter " + param + ") reads learning"
                        + " rate " + lrVar + ", which no lr_schedule op writes; the servers need a constant rate");
            }
            optimizerOf.put(param, ServerOptimizers.of(op, param, lr));
            gradOf.put(param, op.in("Grad"));
            for (String in : op.allInputs()) {
                if (!in.equals(param) && !in.equals(op.in("Grad"))) {
                    gone.add(in);
                }
            }
        }
        if (optimizerOf.isEmpty()) {
            throw new PsCompileException("the program has no optimizer ops; call minimize before the parameter-server"
                    + " compile step");
        }
        for (String param : optimizerOf.keySet()) {
            Regularizer r = block.var(param).regularizer();
            if (r != null) {
                // its decay ops read the worker's copy of the parameter, and the servers' updates know nothing of it
                throw new PsCompileException("parameter " + param + " has the regularizer " + r + ", which the"
                        + " parameter-server compile step does not carry to the servers; drop the regularizer in"
                        + " strategy mode ps, or train in collective mode");
            }
        }
        for (Op op : ops) {
            if (op.type().equals(ClipOps.CLIP_BY_GLOBAL_NORM)) {
                // the servers update each table from its own pushed gradient: no one sees the norm of all of them
                throw new PsCompileException("the optimizer clips the gradients by their global norm (grad_clip "
                        + "ClipGradByGlobalNorm), which the parameter-server compile step does not carry to the servers;"
                        + " drop grad_clip in strategy mode ps, or train in collective mode");
            }
        }
        gone.add(Optimizer.STEP_VAR);

        Map<String, Op> sparseLookup = sparseLookups(ops, optimizerOf.keySet());
        Map<String, Op> initOf = initializers(workerStartup);
        List<SparseTableConfig> sparse = new ArrayList<>();
        for (var e : sparseLookup.entrySet()) {
            String table = e.getKey();
            Var w = block.var(table);
            sparse.add(new SparseTableConfig(table, Math.toIntExact(w.shape()[1]), optimizerOf.get(table),
                    ServerInitializers.of(initOp(initOf, table), table)));
            gone.add(table);
            gone.add(gradOf.get(table));
        }
        // checked before the program is rewritten: a bad setting leaves the user's program as it was
        sparse = SparseTableRules.of(strategy).apply(sparse);
        List<DenseTableConfig> dense = new ArrayList<>();
        for (String param : optimizerOf.keySet()) {
            if (!sparseLookup.containsKey(param)) {
                dense.add(new DenseTableConfig(param, block.var(param).shape(), optimizerOf.get(param),
                        ServerInitializers.of(initOp(initOf, param), param)));
            }
        }

        List<Op> rewritten = rewrite(ops, sparseLookup.keySet(), block, gone);
        for (DenseTableConfig t : dense) {
            rewritten.add(lastWriter(rewritten, gradOf.get(t.name()), t.name()) + 1, new Op(PsOpTypes.PUSH_DENSE,
                    Map.of("Grad", List.of(gradOf.get(t.name()))), Map.of(), Map.of("param", t.name())));
        }
        for (int i = dense.size() - 1; i >= 0; i--) {
            DenseTableConfig t = dense.get(i);
            rewritten.addFirst(new Op(PsOpTypes.PULL_DENSE, Map.of(), Map.of("Out", List.of(t.name())),
                    Map.of("param", t.name(), "shape", t.shape())));
        }
        boolean fused = fuses(strategy);
        if (fused) {
            rewritten = fuse(rewritten);
        }
        for (int i = block.ops().size() - 1; i >= 0; i--) {
            block.removeOp(i);
        }
        gone.forEach(block::removeVar);
        if (mode != PsMode.ASYNC) {
            // the step's end: sync and half-async wait for every worker there, geo counts its k steps
            rewritten.add(new Op(PsOpTypes.SEND_BARRIER, Map.of(), Map.of(), Map.of()));
        }
        for (Op op : rewritten) {
            block.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
        }
        dropInitializers(workerStartup, gone);
        return new PsPlan(mode, servers, minBlockSize, worker, workerStartup, dense, sparse,
                strategy.protocol().spelling(), fused, CommunicatorSettings.of(strategy));
    }

    /**
     * Whether a step's pulls and pushes go as one message per server: {@code tensor_fuse}, or a star_server protocol,
     * whose pull/push semantics are one pull and one push per server per step.
     */
    static boolean fuses(DistributedStrategy strategy) {
        return fuses(Protocol.of(strategy.get(StrategySchema.PROTOCOL)), strategy.get(StrategySchema.TENSOR_FUSE));
    }

    /** {@link #fuses(DistributedStrategy)} for a protocol and a tensor_fuse given apart from a strategy. */
    public static boolean fuses(Protocol protocol, boolean tensorFuse) {
        return tensorFuse || protocol == Protocol.STAR_SERVER || protocol == Protocol.STAR_SERVER_LITE;
    }

    /**
     * The pulls and pushes of {@code ops} replaced by one {@code pull_fused} first (the sparse ids must be fed, as
     * they are read before any op runs) and one {@code push_fused} after the last op (all gradients are done then).
     */
    private static List<Op> fuse(List<Op> ops) {
        Set<String> written = new HashSet<>();
        ops.forEach(op -> written.addAll(op.allOutputs()));
        List<String> pullIds = new ArrayList<>();
        List<String> pullOut = new ArrayList<>();
        List<String> pullTables = new ArrayList<>();
        List<Long> pullDims = new ArrayList<>();
        List<Long> pullPads = new ArrayList<>();
        List<String> denseOut = new ArrayList<>();
        List<Long> shapes = new ArrayList<>();
        List<Long> ranks = new ArrayList<>();
        List<String> pushIds = new ArrayList<>();
        List<String> pushGrads = new ArrayList<>();
        List<String> pushTables = new ArrayList<>();
        List<Long> pushDims = new ArrayList<>();
        List<Long> pushPads = new ArrayList<>();
        List<String> denseGrads = new ArrayList<>();
        List<String> pushParams = new ArrayList<>();
        List<Op> rest = new ArrayList<>();
        for (Op op : ops) {
            switch (op.type()) {
                case PsOpTypes.PULL_SPARSE -> {
                    if (written.contains(op.in("Ids"))) {
                        throw new PsCompileException("tensor_fuse pulls every table at the start of the step, but the"
                                + " ids " + op.in("Ids") + " of sparse table " + op.stringAttr("table") + " are computed"
                                + " by an op of the program; feed them, or set tensor_fuse: false");
                    }
                    pullIds.add(op.in("Ids"));
                    pullOut.add(op.out("Out"));
                    pullTables.add(op.stringAttr("table"));
                    pullDims.add(op.<Long>attr("dim"));
                    pullPads.add(op.<Long>attr("padding_idx"));
                }
                case PsOpTypes.PULL_DENSE -> {
                    denseOut.add(op.out("Out"));
                    for (long d : op.longsAttr("shape")) {
                        shapes.add(d);
                    }
                    ranks.add((long) op.longsAttr("shape").length);
                }
                case PsOpTypes.PUSH_SPARSE -> {
                    pushIds.add(op.in("Ids"));
                    pushGrads.add(op.in("Grad"));
                    pushTables.add(op.stringAttr("table"));
                    pushDims.add(op.<Long>attr("dim"));
                    pushPads.add(op.<Long>attr("padding_idx"));
                }
                case PsOpTypes.PUSH_DENSE -> {
                    denseGrads.add(op.in("Grad"));
                    pushParams.add(op.stringAttr("param"));
                }
                default -> rest.add(op);
            }
        }
        List<Op> out = new ArrayList<>();
        out.add(new Op(PsOpTypes.PULL_FUSED, slots("Ids", pullIds), slots("Out", pullOut, "Dense", denseOut),
                Map.of("tables", strings(pullTables), "dims", longs(pullDims), "padding_idx", longs(pullPads),
                        "params", strings(denseOut), "shapes", longs(shapes), "ranks", longs(ranks))));
        out.addAll(rest);
        Map<String, List<String>> pushIn = new LinkedHashMap<>(slots("Ids", pushIds, "Grad", pushGrads));
        pushIn.putAll(slots("DenseGrad", denseGrads));
        out.add(new Op(PsOpTypes.PUSH_FUSED, pushIn, Map.of(), Map.of("tables", strings(pushTables), "dims", longs(pushDims),
                "padding_idx", longs(pushPads), "params", strings(pushParams))));
        return out;
    }

    /** Slots with their vars, leaving out the empty ones (an optional slot is absent rather than empty). */
    private static Map<String, List<String>> slots(String slot, List<String> vars) {
        return vars.isEmpty() ? Map.of() : Map.of(slot, List.copyOf(vars));
    }

    private static Map<String, List<String>> slots(String a, List<String> as, String b, List<String> bs) {
        Map<String, List<String>> m = new LinkedHashMap<>(slots(a, as));
        m.putAll(slots(b, bs));
        return m;
    }

    private static String[] strings(List<String> values) {
        return values.toArray(String[]::new);
    }

    private static long[] longs(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    /**
     * A forward-only program (a test program cloned before {@code minimize}) rewritten for a worker of {@code plan}:
     * its lookups of the plan's sparse tables become {@code pull_sparse}, and the dense tables it reads are pulled
     * first ({@code pull_dense}), so it evaluates with the servers' current values. Pushes nothing.
     */
    public static Program forward(Program test, PsPlan plan) {
        Program out = test.copy();
        Block block = out.globalBlock();
        Set<String> sparse = new HashSet<>();
        plan.sparseTables().forEach(t -> sparse.add(t.name()));
        List<Op> ops = new ArrayList<>();
        Set<String> read = new HashSet<>();
        for (Op op : block.ops()) {
            read.addAll(op.allInputs());
            if (op.type().equals("lookup_table") && sparse.contains(op.in("W"))) {
                ops.add(new Op(PsOpTypes.PULL_SPARSE, Map.of("Ids", op.input("Ids")), Map.of("Out", op.output("Out")),
                        Map.of("table", op.in("W"), "dim", block.var(op.in("W")).shape()[1],
                                "padding_idx", op.<Long>attr("padding_idx"))));
            } else {
                ops.add(op);
            }
        }
        List<Op> pulls = new ArrayList<>();
        for (DenseTableConfig t : plan.denseTables()) {
            if (read.contains(t.name())) {
                pulls.add(new Op(PsOpTypes.PULL_DENSE, Map.of(), Map.of("Out", List.of(t.name())),
                        Map.of("param", t.name(), "shape", t.shape())));
            }
        }
        for (int i = block.ops().size() - 1; i >= 0; i--) {
            block.removeOp(i);
        }
        sparse.stream().filter(block::hasVar).forEach(block::removeVar);
        for (Op op : pulls) {
            block.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
        }
        for (Op op : ops) {
            block.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
        }
        return out;
    }

    /** The constant learning rate each lr_schedule op writes, by var; a changing schedule fails naming it. */
    private static Map<String, Float> learningRates(List<Op> ops) {
        Map<String, Float> lrs = new LinkedHashMap<>();
        for (Op op : ops) {
            if (op.type().equals("lr_schedule")) {
                String decay = op.stringAttr("decay");
                int warmup = op.intAttr("warmup_steps");
                if (!decay.equals("constant") || warmup > 0) {
                    throw new PsCompileException("learning-rate schedule " + decay
                            + (warmup > 0 ? " with " + warmup + " warmup steps" : "")
                            + " cannot run on the parameter servers yet: they keep the learning rate constant; use"
                            + " LrSchedule.constant");
                }
                lrs.put(op.out("LearningRate"), op.floatAttr("base_lr"));
            }
        }
        return lrs;
    }

    /** The trained tables that an is_sparse lookup_table reads, with that op; a table read twice fails. */
    private static Map<String, Op> sparseLookups(List<Op> ops, Set<String> trained) {
        Map<String, Op> lookups = new LinkedHashMap<>();
        for (Op op : ops) {
            if (op.type().equals("lookup_table") && op.boolAttr("is_sparse") && trained.contains(op.in("W"))) {
                if (lookups.putIfAbsent(op.in("W"), op) != null) {
                    throw new PsCompileException("sparse table " + op.in("W") + " is read by more than one lookup_table;"
                            + " the parameter-server compile step transpiles one lookup per table: give each its own"
                            + " table");
                }
            }
        }
        return lookups;
    }

    /** The ops of the worker program: optimizer ops dropped, sparse lookups and their gradients replaced. */
    private static List<Op> rewrite(List<Op> ops, Set<String> sparseTables, Block block, Set<String> gone) {
        List<Op> out = new ArrayList<>();
        for (Op op : ops) {
            boolean sparseLookup = (op.type().equals("lookup_table") || op.type().equals("lookup_table_grad"))
                    && op.inputs().containsKey("W") && sparseTables.contains(op.in("W"));
            if (op.inputs().containsKey("Param") && op.inputs().containsKey("Grad") || op.type().equals("lr_schedule")
                    || op.type().equals("increment") && op.in("X").equals(Optimizer.STEP_VAR)) {
                continue;
            }
            if (sparseLookup) {
                String table = op.in("W");
                Map<String, Object> attrs = Map.of("table", table, "dim", block.var(table).shape()[1],
                        "padding_idx", op.<Long>attr("padding_idx"));
                out.add(op.type().equals("lookup_table")
                        ? new Op(PsOpTypes.PULL_SPARSE, Map.of("Ids", op.input("Ids")), Map.of("Out", op.output("Out")), attrs)
                        : new Op(PsOpTypes.PUSH_SPARSE, Map.of("Ids", op.input("Ids"), "Grad", op.input("Out@GRAD")),
                                Map.of(), attrs));
                continue;
            }
            for (String in : op.allInputs()) {
                if (gone.contains(in)) {
                    throw new PsCompileException("op " + op.type() + " reads " + in + ", which moves to the parameter"
                            + " servers (a sparse table, optimizer state or learning rate); the parameter-server compile"
                            + " step cannot transpile it");
                }
            }
            out.add(op);
        }
        return out;
    }

    private static int lastWriter(List<Op> ops, String var, String param) {
        for (int i = ops.size() - 1; i >= 0; i--) {
            if (ops.get(i).allOutputs().contains(var)) {
                return i;
            }
        }
        throw new PsCompileException("no op writes " + var + ", the gradient of dense parameter " + param);
    }

    private static Map<String, Op> initializers(Program startup) {
        Map<String, Op> init = new LinkedHashMap<>();
        for (Op op : startup.globalBlock().ops()) {
            op.allOutputs().forEach(v -> init.put(v, op));
        }
        return init;
    }

    private static Op initOp(Map<String, Op> initOf, String param) {
        Op op = initOf.get(param);
        if (op == null) {
            throw new PsCompileException("parameter " + param + " has no initializer in the startup program");
        }
        return op;
    }

    /** The worker no longer initialises what the servers hold (a large table would only take its memory). */
    private static void dropInitializers(Program startup, Set<String> gone) {
        Block b = startup.globalBlock();
        for (int i = b.ops().size() - 1; i >= 0; i--) {
            if (gone.containsAll(b.ops().get(i).allOutputs())) {
                b.removeOp(i);
            }
        }
        gone.stream().filter(b::hasVar).forEach(b::removeVar);
    }
}
