package org.fleet4j.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.ExecutionSettings;
import org.fleet4j.fleet.Fleet;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.fleet4j.strategy.Protocol;

/**
 * A user's program for the sync-mode tests, run by bin/fleetrun from a jar: a small Wide&Deep (two sparse slots, an
 * MLP) trained with SGD on a seeded global batch per step. {@code local} trains one process on the whole global batch,
 * its parameters set to the values the servers start their tables with; {@code ps} is the same program with a strategy
 * of mode ps (sync), over the protocol given (grpc when none): each of W workers trains on its
 * W-th of the global batch. Trainer 0 writes every step's loss of the
 * global batch and every parameter's final values to OUT ("loss STEP VALUE", "param NAME V0 V1 ...").
 * Args: local|ps|ps-async OUT STEPS GLOBAL_BATCH [PROTOCOL [tensor_fuse|local_loss]] ({@code ps-async}: the same in
 * async mode, for the fault tests; PROTOCOL: the strategy's protocol in ps modes, grpc when absent; tensor_fuse: the
 * strategy's tensor_fuse on; local_loss: each worker prints the loss of its own share instead of all-reducing it, so
 * that the fault tests' workers wait for each other only at the servers).
 */
public final class SyncPsProgram {
    static final int VOCAB = 40;
    private static final int DIM = 4;
    private static final int SLOTS = 2;
    private static final int DENSE = 3;
    private static final double LR = 0.3;

    private SyncPsProgram() {
    }

    private record Net(Program main, Program startup, List<Var> slots, Var dense, Var label, Var loss) {
        static Net build() {
            Program main = new Program().setRandomSeed(5);
            Program startup = new Program().setRandomSeed(5);
            Layers nn = new Layers(main, startup);
            List<Var> slots = new ArrayList<>();
            List<Var> parts = new ArrayList<>();
            List<Var> wide = new ArrayList<>();
            for (int s = 0; s < SLOTS; s++) {
                Var ids = nn.data("C" + s, DType.I64, -1, 1);
                slots.add(ids);
                parts.add(nn.embedding(ids, VOCAB, DIM, true));
                wide.add(nn.embedding(ids, VOCAB, 1, true));
            }
            Var dense = nn.data("dense", DType.F32, -1, DENSE);
            Var label = nn.data("label", DType.I64, -1, 1);
            parts.add(dense);
            Var h = nn.fc(nn.concat(parts, 1), 8, "relu");
            Var logit = nn.add(nn.fc(h, 1, null), nn.sum(wide));
            Var twoClass = nn.concat(List.of(nn.scale(logit, 0f, 0f), logit), 1);
            Var loss = nn.mean(nn.softmaxWithCrossEntropy(twoClass, label));
            return new Net(main, startup, slots, dense, label, loss);
        }

        /** Rows [from, to) of step {@code step}'s global batch of {@code global} rows. */
        Map<String, Tensor> feed(int step, int global, int from, int to) {
            Random r = new Random(1000L + step);
            int n = to - from;
            Tensor[] ids = new Tensor[SLOTS];
            for (int s = 0; s < SLOTS; s++) {
                ids[s] = Tensor.zeros(DType.I64, n, 1);
            }
            Tensor d = Tensor.zeros(DType.F32, n, DENSE);
            Tensor l = Tensor.zeros(DType.I64, n, 1);
            for (int i = 0; i < global; i++) {
                long[] rowIds = new long[SLOTS];
                for (int s = 0; s < SLOTS; s++) {
                    // skewed, so that ids repeat within and across the workers' shares
                    rowIds[s] = (long) (VOCAB * Math.pow(r.nextDouble(), 2));
                }
                float[] x = new float[DENSE];
                for (int j = 0; j < DENSE; j++) {
                    x[j] = (float) r.nextGaussian();
                }
                long y = r.nextDouble() < 0.5 + 0.4 * Math.tanh(x[0] - x[1] + (rowIds[0] % 3 - 1)) ? 1 : 0;
                if (i >= from && i < to) {
                    for (int s = 0; s < SLOTS; s++) {
                        ids[s].setLong(i - from, rowIds[s]);
                    }
                    for (int j = 0; j < DENSE; j++) {
                        d.setFloat((long) (i - from) * DENSE + j, x[j]);
                    }
                    l.setLong(i - from, y);
                }
            }
            Map<String, Tensor> feed = new HashMap<>();
            for (int s = 0; s < SLOTS; s++) {
                feed.put(slots.get(s).name(), ids[s]);
            }
            feed.put(dense.name(), d);
            feed.put(label.name(), l);
            return feed;
        }
    }

    public static void main(String[] args) throws IOException {
        boolean ps = args[0].startsWith("ps");
        Path out = Path.of(args[1]);
        int steps = Integer.parseInt(args[2]);
        int global = Integer.parseInt(args[3]);
        DistributedStrategy strategy = !ps ? new DistributedStrategy()
                : args[0].equals("ps-async") ? new DistributedStrategy().mode(Mode.PS).aSync(true)
                        .aSyncConfigs(c -> c.runtimeSplitSendRecv(true))
                : new DistributedStrategy().mode(Mode.PS).aSync(false);
        if (ps && args.length > 4) {
            strategy.protocol(Protocol.of(args[4]));
        }
        if (ps && args.length > 5 && args[5].equals("tensor_fuse")) {
            strategy.tensorFuse(true);
        }
        boolean localLoss = args.length > 5 && args[5].equals("local_loss");
        PsPlan tables = tablesOf(Net.build());
        try (Fleet fleet = Fleet.init(strategy)) {
            Net net = Net.build();
            fleet.distributedOptimizer(new SGD(LR)).minimize(net.loss());
            if (fleet.isServer()) {
                fleet.initServer(null);
                fleet.runServer();
                return;
            }
            if (ps) {
                fleet.initWorker();
            }
            int w = fleet.workerIndex();
            int workers = fleet.workerNum();
            if (global % workers != 0) {
                throw new IllegalArgumentException("the global batch " + global + " does not split over " + workers + " workers");
            }
            StringBuilder report = new StringBuilder();
            try (Executor exe = ExecutionSettings.executor(fleet)) {
                Scope scope = new Scope();
                exe.run(net.startup(), scope);
                if (!ps) {
                    startAsTheServersDo(scope, tables);
                }
                int share = global / workers;
                for (int step = 0; step < steps; step++) {
                    Map<String, Tensor> r = exe.run(net.main(), scope, net.feed(step, global, w * share, (w + 1) * share),
                            List.of(net.loss().name()));
                    double own = r.get(net.loss().name()).getFloat(0);
                    double loss = localLoss ? own : fleet.util().allReduce(own / workers, ReduceOp.SUM);
                    report.append(String.format(Locale.ROOT, "loss %d %.9g%n", step, loss));
                    System.out.printf(Locale.ROOT, "step %d loss %.6f%n", step, loss);
                    System.out.flush();
                }
                Map<String, Tensor> params = ps ? fromServers(fleet, tables) : fromScope(scope, tables);
                params.forEach((name, t) -> {
                    report.append("param ").append(name);
                    for (long e = 0; e < t.numel(); e++) {
                        report.append(' ').append(String.format(Locale.ROOT, "%.9g", t.getFloat(e)));
                    }
                    report.append('\n');
                });
            }
            if (ps) {
                fleet.stopWorker();
            }
            if (fleet.isFirstWorker()) {
                Files.writeString(out, report);
            }
        }
    }

    /** The tables a 1-server plan of this program has, with the initializers the servers use. */
    private static PsPlan tablesOf(Net net) {
        new SGD(LR).applyGradients(net.main(), Backward.appendBackward(net.loss()));
        return PsCompiler.compile(net.main(), new DistributedStrategy().mode(Mode.PS).aSync(false), 1);
    }

    private static void startAsTheServersDo(Scope scope, PsPlan plan) {
        for (DenseTableConfig t : plan.denseTables()) {
            Tensor p = scope.get(t.name());
            for (long e = 0; e < p.numel(); e++) {
                p.setFloat(e, t.initializer().value(0, e));
            }
        }
        for (SparseTableConfig t : plan.sparseTables()) {
            Tensor p = scope.get(t.name());
            for (long id = 0; id < VOCAB; id++) {
                for (long j = 0; j < t.dim(); j++) {
                    p.setFloat(id * t.dim() + j, t.initializer().value(id, j));
                }
            }
        }
    }

    private static Map<String, Tensor> fromScope(Scope scope, PsPlan plan) {
        Map<String, Tensor> params = new LinkedHashMap<>();
        plan.denseTables().forEach(t -> params.put(t.name(), scope.get(t.name())));
        plan.sparseTables().forEach(t -> params.put(t.name(), scope.get(t.name())));
        return params;
    }

    private static Map<String, Tensor> fromServers(Fleet fleet, PsPlan plan) {
        PsCommunicator servers = fleet.execContext().service(PsCommunicator.class).orElseThrow();
        Map<String, Tensor> params = new LinkedHashMap<>();
        for (DenseTableConfig t : plan.denseTables()) {
            Tensor p = Tensor.zeros(DType.F32, t.shape());
            servers.pullDense(t.name(), p.segment());
            params.put(t.name(), p);
        }
        long[] all = new long[VOCAB];
        for (int id = 0; id < VOCAB; id++) {
            all[id] = id;
        }
        for (SparseTableConfig t : plan.sparseTables()) {
            Tensor rows = Tensor.zeros(DType.F32, VOCAB, t.dim());
            servers.pullSparse(t.name(), Tensor.ofLongs(all, VOCAB).segment(), VOCAB, rows.segment());
            params.put(t.name(), rows);
        }
        return params;
    }
}
