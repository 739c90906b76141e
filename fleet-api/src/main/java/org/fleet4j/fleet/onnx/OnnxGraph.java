package org.fleet4j.fleet.onnx;

import com.google.protobuf.ByteString;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.proto.OnnxProto.AttributeProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.GraphProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.NodeProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.TensorProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.TensorShapeProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.TypeProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ValueInfoProto;

/**
 * An ONNX graph under construction, in static single assignment: every ONNX name is produced once. A Fleet4J var
 * may be written more than once (or not at all, when an op such as an inference-time dropout is removed), so the
 * graph keeps, per var, the ONNX name that holds its current value.
 */
final class OnnxGraph {
    private final GraphProto.Builder graph = GraphProto.newBuilder();
    private final Map<String, String> current = new HashMap<>();
    private final Set<String> taken = new HashSet<>();

    OnnxGraph(String name) {
        graph.setName(name);
    }

    /** A graph input for a fed var; {@code -1} dims become named symbolic dims. */
    void input(String var, DType dtype, long[] shape) {
        graph.addInput(valueInfo(define(var), dtype, shape));
    }

    /** A graph output holding the current value of {@code var}, under the var's own name. */
    void output(String var, DType dtype, long[] shape) {
        String value = value(var);
        if (!value.equals(var)) {
            if (taken.contains(var)) {
                throw new IllegalStateException("ONNX export: output '" + var + "' is shadowed by an earlier value");
            }
            taken.add(var);
            node("Identity", List.of(value), List.of(var), Map.of());
        }
        graph.addOutput(valueInfo(var, dtype, shape));
    }

    /** The parameter {@code var} as a constant of the graph, with the values in {@code value}. */
    void initializer(String var, Tensor value) {
        graph.addInitializer(tensor(define(var), value));
    }

    /** A constant tensor that no Fleet4J var holds (shapes, axes, scalars); returns its fresh ONNX name. */
    String constant(String hint, Tensor value) {
        String name = fresh(hint);
        graph.addInitializer(tensor(name, value));
        return name;
    }

    boolean has(String var) {
        return current.containsKey(var);
    }

    /** The ONNX name that holds the current value of {@code var}. */
    String value(String var) {
        String v = current.get(var);
        if (v == null) {
            throw new IllegalStateException("ONNX export: var '" + var + "' is used before any op writes it");
        }
        return v;
    }

    /** A new ONNX name for the next value of {@code var}, which becomes its current value. */
    String define(String var) {
        String name = taken.contains(var) ? fresh(var) : var;
        taken.add(name);
        current.put(var, name);
        return name;
    }

    /** Makes {@code var} hold the same value as the ONNX name {@code value} (an op that is the identity at inference). */
    void alias(String var, String value) {
        current.put(var, value);
    }

    /** A fresh ONNX name for an intermediate value, derived from {@code hint}. */
    String fresh(String hint) {
        String name = hint;
        for (int i = 1; taken.contains(name); i++) {
            name = hint + "/" + i;
        }
        taken.add(name);
        return name;
    }

    void node(String opType, List<String> inputs, List<String> outputs, Map<String, Object> attrs) {
        NodeProto.Builder n = NodeProto.newBuilder().setOpType(opType).setName(fresh(outputs.getFirst() + "/" + opType))
                .addAllInput(inputs).addAllOutput(outputs);
        attrs.forEach((k, v) -> n.addAttribute(attribute(k, v)));
        graph.addNode(n);
    }

    GraphProto build() {
        return graph.build();
    }

    private static AttributeProto attribute(String name, Object value) {
        AttributeProto.Builder a = AttributeProto.newBuilder().setName(name);
        switch (value) {
            case Integer i -> a.setType(AttributeProto.AttributeType.INT).setI(i);
            case Long l -> a.setType(AttributeProto.AttributeType.INT).setI(l);
            case Float f -> a.setType(AttributeProto.AttributeType.FLOAT).setF(f);
            case String str -> a.setType(AttributeProto.AttributeType.STRING).setS(ByteString.copyFromUtf8(str));
            case long[] ls -> {
                a.setType(AttributeProto.AttributeType.INTS);
                for (long l : ls) {
                    a.addInts(l);
                }
            }
            default -> throw new IllegalArgumentException("ONNX attribute " + name + " of type " + value.getClass());
        }
        return a.build();
    }

    static int elemType(DType dtype) {
        return switch (dtype) {
            case F32 -> TensorProto.DataType.FLOAT_VALUE;
            case F64 -> TensorProto.DataType.DOUBLE_VALUE;
            case I32 -> TensorProto.DataType.INT32_VALUE;
            case I64 -> TensorProto.DataType.INT64_VALUE;
            case BF16 -> TensorProto.DataType.BFLOAT16_VALUE;
        };
    }

    private static ValueInfoProto valueInfo(String name, DType dtype, long[] shape) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (int d = 0; d < shape.length; d++) {
            s.addDim(shape[d] >= 0 ? TensorShapeProto.Dimension.newBuilder().setDimValue(shape[d])
                    : TensorShapeProto.Dimension.newBuilder().setDimParam(d == 0 ? "batch" : name + "_dim" + d));
        }
        return ValueInfoProto.newBuilder().setName(name).setType(TypeProto.newBuilder().setTensorType(
                TypeProto.Tensor.newBuilder().setElemType(elemType(dtype)).setShape(s))).build();
    }

    /** ONNX stores raw tensor data little-endian, as Fleet4J's off-heap tensors are on the machines it runs on. */
    private static TensorProto tensor(String name, Tensor value) {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("ONNX export needs a little-endian machine");
        }
        TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(elemType(value.dtype()));
        for (long d : value.shape()) {
            t.addDims(d);
        }
        return t.setRawData(ByteString.copyFrom(value.segment().asSlice(0, value.numel() * value.dtype().byteSize()).toArray(ValueLayout.JAVA_BYTE))).build();
    }
}
