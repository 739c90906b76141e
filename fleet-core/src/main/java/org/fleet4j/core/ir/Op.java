package org.fleet4j.core.ir;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One operation of a block: a type ("matmul"), named input and output slots each holding a list of var names,
 * and typed attributes. The op's {@code OpSpec} (looked up by type) gives it meaning.
 */
public final class Op {
    private final String type;
    private final LinkedHashMap<String, List<String>> inputs;
    private final LinkedHashMap<String, List<String>> outputs;
    private final LinkedHashMap<String, Object> attrs;

    public Op(String type, Map<String, List<String>> inputs, Map<String, List<String>> outputs,
              Map<String, Object> attrs) {
        this.type = Objects.requireNonNull(type);
        this.inputs = copy(inputs);
        this.outputs = copy(outputs);
        this.attrs = new LinkedHashMap<>(attrs);
    }

    private static LinkedHashMap<String, List<String>> copy(Map<String, List<String>> m) {
        LinkedHashMap<String, List<String>> c = new LinkedHashMap<>();
        m.forEach((k, v) -> c.put(k, List.copyOf(v)));
        return c;
    }

    public String type() {
        return type;
    }

    public Map<String, List<String>> inputs() {
        return Collections.unmodifiableMap(inputs);
    }

    public Map<String, List<String>> outputs() {
        return Collections.unmodifiableMap(outputs);
    }

    public Map<String, Object> attrs() {
        return Collections.unmodifiableMap(attrs);
    }

    /** Var names of an input slot; empty when the slot is absent. */
    public List<String> input(String slot) {
        return inputs.getOrDefault(slot, List.of());
    }

    public List<String> output(String slot) {
        return outputs.getOrDefault(slot, List.of());
    }

    /** The single var of an input slot, or null when the slot is empty. */
    public String in(String slot) {
        List<String> l = input(slot);
        return l.isEmpty() ? null : l.get(0);
    }

    public String out(String slot) {
        List<String> l = output(slot);
        return l.isEmpty() ? null : l.get(0);
    }

    public List<String> allInputs() {
        List<String> all = new ArrayList<>();
        inputs.values().forEach(all::addAll);
        return all;
    }

    public List<String> allOutputs() {
        List<String> all = new ArrayList<>();
        outputs.values().forEach(all::addAll);
        return all;
    }

    public boolean hasAttr(String name) {
        return attrs.containsKey(name);
    }

    @SuppressWarnings("unchecked")
    public <T> T attr(String name) {
        Object v = attrs.get(name);
        if (v == null) {
            throw new IrException("op " + type + " has no attribute '" + name + "'");
        }
        return (T) v;
    }

    public int intAttr(String name) {
        return (Integer) attr(name);
    }

    public float floatAttr(String name) {
        return (Float) attr(name);
    }

    public boolean boolAttr(String name) {
        return (Boolean) attr(name);
    }

    public String stringAttr(String name) {
        return attr(name);
    }

    public long[] longsAttr(String name) {
        return ((long[]) attr(name)).clone();
    }

    void putAttr(String name, Object value) {
        attrs.put(name, value);
    }

    /** Renames every use of a var in this op's inputs and outputs. */
    public void renameVar(String from, String to) {
        inputs.replaceAll((k, v) -> v.stream().map(n -> n.equals(from) ? to : n).toList());
        outputs.replaceAll((k, v) -> v.stream().map(n -> n.equals(from) ? to : n).toList());
    }

    boolean sameAs(Op o) {
        if (!type.equals(o.type) || !inputs.equals(o.inputs) || !outputs.equals(o.outputs)
                || !attrs.keySet().equals(o.attrs.keySet())) {
            return false;
        }
        for (var e : attrs.entrySet()) {
            if (!AttrType.valuesEqual(e.getValue(), o.attrs.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** "matmul(X=[x], Y=[fc_0.w_0]) -> (Out=[tmp_0]) {transpose_X=false}". */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(type).append('(');
        appendSlots(sb, inputs);
        sb.append(") -> (");
        appendSlots(sb, outputs);
        sb.append(')');
        if (!attrs.isEmpty()) {
            sb.append(" {");
            boolean first = true;
            for (var e : attrs.entrySet()) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                sb.append(e.getKey()).append('=').append(AttrType.format(e.getValue()));
            }
            sb.append('}');
        }
        return sb.toString();
    }

    private static void appendSlots(StringBuilder sb, Map<String, List<String>> slots) {
        boolean first = true;
        for (var e : slots.entrySet()) {
            if (!first) {
                sb.append(", ");
            }
            first = false;
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
    }
}
