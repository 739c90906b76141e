package org.fleet4j.pserver.compile;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.table.RowInitializer;
import org.fleet4j.pserver.table.SavedValues;
import org.fleet4j.pserver.table.SparseTableConfig;

/**
 * A worker's forward program ({@link PsCompiler#forward}) made to run on one process without servers, with the
 * tables' values gathered from a save of every server (Paddle saves all rows of a distributed table with its inference
 * model; so does this): each {@code pull_dense} becomes the parameter itself, a persistable var holding the whole
 * value; each {@code pull_sparse} becomes {@code lookup_sparse_table} on two persistable vars, {@code TABLE@ids}
 * (every row's id, ascending) and {@code TABLE@rows}; an id no server held gets the row a server would have created,
 * from the table's initializer, so the model predicts what the servers would.
 *
 * @param program the forward program without parameter-server ops
 * @param values every persistable var it adds, by name
 */
public record PsInference(Program program, Map<String, Tensor> values) {
    public static PsInference of(Program forward, PsPlan plan, SavedValues saved) {
        Map<String, SparseTableConfig> sparse = new HashMap<>();
        plan.sparseTables().forEach(t -> sparse.put(t.name(), t));
        Program out = forward.copy();
        Block block = out.globalBlock();
        Map<String, Tensor> values = new LinkedHashMap<>();
        List<Op> ops = List.copyOf(block.ops());
        for (int i = ops.size() - 1; i >= 0; i--) {
            block.removeOp(i);
        }
        for (Op op : ops) {
            switch (op.type()) {
                case PsOpTypes.PULL_DENSE -> {
                    String param = op.stringAttr("param");
                    float[] value = saved.dense().get(param);
                    if (value == null) {
                        throw new PsCompileException("the servers' save has no dense table " + param);
                    }
                    block.var(op.out("Out")).setPersistable(true);
                    values.put(op.out("Out"), Tensor.of(value, op.longsAttr("shape")));
                }
                case PsOpTypes.PULL_SPARSE -> {
                    String table = op.stringAttr("table");
                    SavedValues.Rows rows = saved.sparse().get(table);
                    if (rows == null) {
                        throw new PsCompileException("the servers' save has no sparse table " + table);
                    }
                    String ids = table + "@ids";
                    String w = table + "@rows";
                    if (!values.containsKey(ids)) {
                        block.createVar(ids, DType.I64, rows.ids().length).setPersistable(true);
                        block.createVar(w, DType.F32, rows.ids().length, rows.dim()).setPersistable(true);
                        values.put(ids, Tensor.ofLongs(rows.ids(), rows.ids().length));
                        values.put(w, Tensor.of(rows.values(), rows.ids().length, rows.dim()));
                    }
                    Map<String, Object> attrs = new LinkedHashMap<>(initializerAttrs(sparse.get(table).initializer()));
                    attrs.put("dim", op.<Long>attr("dim"));
                    attrs.put("padding_idx", op.<Long>attr("padding_idx"));
                    block.appendOp(PsOpTypes.LOOKUP_SPARSE_TABLE, Map.of("Ids", op.input("Ids"), "Keys", List.of(ids),
                            "W", List.of(w)), Map.of("Out", op.output("Out")), attrs);
                }
                default -> block.appendOp(op.type(), op.inputs(), op.outputs(), op.attrs());
            }
        }
        return new PsInference(out, values);
    }

    private static Map<String, Object> initializerAttrs(RowInitializer init) {
        return switch (init) {
            case RowInitializer.Constant c -> Map.of("init", "constant", "init_a", c.value(), "init_b", 0f, "init_seed", 0L);
            case RowInitializer.Uniform u -> Map.of("init", "uniform", "init_a", u.min(), "init_b", u.max(), "init_seed", u.seed());
            case RowInitializer.Normal n -> Map.of("init", "normal", "init_a", n.mean(), "init_b", n.std(), "init_seed", n.seed());
        };
    }

    /** The initializer that {@link #of} wrote into a {@code lookup_sparse_table} op's attributes. */
    public static RowInitializer initializer(Op op) {
        float a = op.floatAttr("init_a");
        float b = op.floatAttr("init_b");
        long seed = op.<Long>attr("init_seed");
        return switch (op.stringAttr("init")) {
            case "constant" -> RowInitializer.constant(a);
            case "uniform" -> RowInitializer.uniform(a, b, seed);
            case "normal" -> RowInitializer.normal(a, b, seed);
            default -> throw new PsCompileException("op " + op.type() + ": initializer '" + op.stringAttr("init")
                    + "' is none of constant, uniform, normal");
        };
    }
}
