package org.fleet4j.pserver.worker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.SelectedRows;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsOpTypes;

/**
 * The specs and kernels of the ops the PS compile step writes: each kernel takes the job's {@link PsCommunicator}
 * from the execution context it is made with, so two jobs (or a server and a worker) share a JVM in a test.
 */
final class PsOps {
    private PsOps() {
    }

    static List<OpSpec> specs() {
        return List.of(
                OpSpec.builder(PsOpTypes.PULL_DENSE)
                        .out("Out")
                        .attr("param", AttrType.STRING, "")
                        .attr("shape", AttrType.LONGS, new long[0])
                        .shape(ctx -> ctx.set("Out", DType.F32, ctx.op().longsAttr("shape")))
                        .kernel((op, context) -> {
                            PsCommunicator ps = communicator(op, context, op.stringAttr("param"));
                            String param = op.stringAttr("param");
                            long[] shape = op.longsAttr("shape");
                            return a -> ps.pullDense(param, a.out("Out", DType.F32, shape).segment());
                        })
                        .build(),
                OpSpec.builder(PsOpTypes.PUSH_DENSE)
                        .in("Grad")
                        .attr("param", AttrType.STRING, "")
                        .shape(ctx -> ctx.requireFloat("Grad"))
                        .kernel((op, context) -> {
                            PsCommunicator ps = communicator(op, context, op.stringAttr("param"));
                            String param = op.stringAttr("param");
                            return a -> {
                                Object g = a.inValue("Grad", 0);
                                Tensor grad = g instanceof SelectedRows sr ? sr.toDense() : (Tensor) g;
                                ps.pushDense(param, grad.segment());
                            };
                        })
                        .build(),
                sparse(OpSpec.builder(PsOpTypes.PULL_SPARSE).in("Ids").out("Out"))
                        .shape(ctx -> {
                            ctx.requireInteger("Ids");
                            ctx.set("Out", DType.F32, ctx.shape("Ids")[0], ctx.op().<Long>attr("dim"));
                        })
                        .kernel((op, context) -> pullSparse(op, communicator(op, context, op.stringAttr("table"))))
                        .build(),
                sparse(OpSpec.builder(PsOpTypes.PUSH_SPARSE).in("Ids", "Grad"))
                        .shape(ctx -> {
                            ctx.requireInteger("Ids");
                            ctx.requireFloat("Grad");
                        })
                        .kernel((op, context) -> pushSparse(op, communicator(op, context, op.stringAttr("table"))))
                        .build(),
                fused(OpSpec.builder(PsOpTypes.PULL_FUSED).optionalVariadicIn("Ids").optionalOut("Out", "Dense"))
                        .attr("shapes", AttrType.LONGS, new long[0])
                        .attr("ranks", AttrType.LONGS, new long[0])
                        .shape(ctx -> {
                            Op op = ctx.op();
                            long[] dims = op.longsAttr("dims");
                            for (int k = 0; k < dims.length; k++) {
                                ctx.set("Out", k, DType.F32, ctx.shape("Ids", k)[0], dims[k]);
                            }
                            long[][] shapes = denseShapes(op);
                            for (int k = 0; k < shapes.length; k++) {
                                ctx.set("Dense", k, DType.F32, shapes[k]);
                            }
                        })
                        .kernel((op, context) -> pullFused(op, communicator(op, context, "(fused)")))
                        .build(),
                fused(OpSpec.builder(PsOpTypes.PUSH_FUSED).optionalVariadicIn("Ids").optionalVariadicIn("Grad")
                        .optionalVariadicIn("DenseGrad"))
                        .shape(ctx -> { })
                        .kernel((op, context) -> pushFused(op, communicator(op, context, "(fused)")))
                        .build(),
                OpSpec.builder(PsOpTypes.SEND_BARRIER)
                        .shape(ctx -> { })
                        .kernel((op, context) -> {
                            PsCommunicator ps = communicator(op, context, "(all)");
                            return a -> ps.sendBarrier();
                        })
                        .build());
    }

    private static OpSpec.Builder sparse(OpSpec.Builder b) {
        return b.attr("table", AttrType.STRING, "")
                .attr("dim", AttrType.LONG, 0L)
                .attr("padding_idx", AttrType.LONG, -1L);
    }

    private static OpSpec.Builder fused(OpSpec.Builder b) {
        return b.attr("tables", AttrType.STRINGS, new String[0])
                .attr("dims", AttrType.LONGS, new long[0])
                .attr("padding_idx", AttrType.LONGS, new long[0])
                .attr("params", AttrType.STRINGS, new String[0]);
    }

    /** pull_fused's dense shapes: the flat {@code shapes} cut by {@code ranks}. */
    private static long[][] denseShapes(Op op) {
        long[] flat = op.longsAttr("shapes");
        long[] ranks = op.longsAttr("ranks");
        long[][] shapes = new long[ranks.length][];
        int at = 0;
        for (int k = 0; k < ranks.length; k++) {
            shapes[k] = Arrays.copyOfRange(flat, at, at + (int) ranks[k]);
            at += (int) ranks[k];
        }
        return shapes;
    }

    /** As pull_dense and pull_sparse for every tensor of the op, in one {@link PsCommunicator#pullFused}. */
    private static Kernel pullFused(Op op, PsCommunicator ps) {
        String[] tables = op.attr("tables");
        long[] dims = op.longsAttr("dims");
        long[] pads = op.longsAttr("padding_idx");
        String[] params = op.attr("params");
        long[][] shapes = denseShapes(op);
        return a -> {
            List<PsCommunicator.Dense> dense = new ArrayList<>();
            for (int k = 0; k < params.length; k++) {
                dense.add(new PsCommunicator.Dense(params[k], a.out("Dense", k, DType.F32, shapes[k]).segment()));
            }
            List<PsCommunicator.Sparse> sparse = new ArrayList<>();
            SparseIds[] distinct = new SparseIds[tables.length];
            Tensor[] rows = new Tensor[tables.length];
            for (int k = 0; k < tables.length; k++) {
                distinct[k] = SparseIds.of(a.in("Ids", k), pads[k]);
                rows[k] = Tensor.zeros(DType.F32, Math.max(1, distinct[k].count()), dims[k]);
                if (distinct[k].count() > 0) {
                    sparse.add(new PsCommunicator.Sparse(tables[k], distinct[k].unique().segment(), distinct[k].count(),
                            rows[k].segment()));
                }
            }
            ps.pullFused(dense, sparse);
            for (int k = 0; k < tables.length; k++) {
                distinct[k].gather(rows[k].segment(),
                        a.out("Out", k, DType.F32, a.in("Ids", k).numel(), dims[k]).segment(), dims[k]);
            }
        };
    }

    /** As push_dense and push_sparse for every tensor of the op, in one {@link PsCommunicator#pushFused}. */
    private static Kernel pushFused(Op op, PsCommunicator ps) {
        String[] tables = op.attr("tables");
        long[] dims = op.longsAttr("dims");
        long[] pads = op.longsAttr("padding_idx");
        String[] params = op.attr("params");
        return a -> {
            List<PsCommunicator.Dense> dense = new ArrayList<>();
            for (int k = 0; k < params.length; k++) {
                Object g = a.inValue("DenseGrad", k);
                Tensor grad = g instanceof SelectedRows sr ? sr.toDense() : (Tensor) g;
                dense.add(new PsCommunicator.Dense(params[k], grad.segment()));
            }
            List<PsCommunicator.Sparse> sparse = new ArrayList<>();
            for (int k = 0; k < tables.length; k++) {
                SparseIds distinct = SparseIds.of(a.in("Ids", k), pads[k]);
                Tensor sums = distinct.merge(a.in("Grad", k).segment(), dims[k]);
                sparse.add(new PsCommunicator.Sparse(tables[k], distinct.unique().segment(), distinct.count(),
                        sums.segment()));
            }
            ps.pushFused(dense, sparse);
        };
    }

    /** Each distinct id is pulled once; the rows are gathered back to the batch's positions. */
    private static Kernel pullSparse(Op op, PsCommunicator ps) {
        String table = op.stringAttr("table");
        long dim = op.<Long>attr("dim");
        long pad = op.<Long>attr("padding_idx");
        return a -> {
            Tensor ids = a.in("Ids");
            SparseIds distinct = SparseIds.of(ids, pad);
            Tensor rows = Tensor.zeros(DType.F32, Math.max(1, distinct.count()), dim);
            if (distinct.count() > 0) {
                ps.pullSparse(table, distinct.unique().segment(), distinct.count(), rows.segment());
            }
            distinct.gather(rows.segment(), a.out("Out", DType.F32, ids.numel(), dim).segment(), dim);
        };
    }

    /** Duplicate ids' gradients are summed on the worker, so each id crosses the wire once. */
    private static Kernel pushSparse(Op op, PsCommunicator ps) {
        String table = op.stringAttr("table");
        long dim = op.<Long>attr("dim");
        long pad = op.<Long>attr("padding_idx");
        return a -> {
            SparseIds distinct = SparseIds.of(a.in("Ids"), pad);
            // an empty push still goes: a sync server counts every worker's push of a table per step
            Tensor sums = distinct.merge(a.in("Grad").segment(), dim);
            ps.pushSparse(table, distinct.unique().segment(), distinct.count(), sums.segment());
        };
    }

    private static PsCommunicator communicator(Op op, ExecContext context, String table) {
        return context.service(PsCommunicator.class).orElseThrow(() -> new IllegalStateException("op " + op.type()
                + " (table " + table + ") needs the job's parameter-server client, but the execution context has no "
                + PsCommunicator.class.getSimpleName() + "; run the worker program with the context of a worker"
                + " (Fleet.initWorker)"));
    }
}
