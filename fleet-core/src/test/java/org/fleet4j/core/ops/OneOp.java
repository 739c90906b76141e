package org.fleet4j.core.ops;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.Tensor;

/** A program of one op whose inputs are fed data vars; runs it (repeatedly, with one executor) and fetches every output. */
final class OneOp {
    private final String type;
    private final Map<String, List<Tensor>> inputs = new LinkedHashMap<>();
    private final Map<String, Object> attrs = new LinkedHashMap<>();
    private Program program;
    private final Executor executor = new Executor();

    private OneOp(String type) {
        this.type = type;
    }

    static OneOp of(String type) {
        return new OneOp(type);
    }

    OneOp in(String slot, Tensor... values) {
        inputs.put(slot, List.of(values));
        return this;
    }

    OneOp attr(String name, Object value) {
        attrs.put(name, value);
        return this;
    }

    Program program() {
        if (program == null) {
            program = new Program();
            var block = program.globalBlock();
            Map<String, List<String>> ins = new LinkedHashMap<>();
            inputs.forEach((slot, ts) -> {
                List<String> names = new ArrayList<>();
                for (int j = 0; j < ts.size(); j++) {
                    String name = slot.toLowerCase() + "_" + j;
                    block.createVar(name, ts.get(j).dtype(), ts.get(j).shape()).setData(true);
                    names.add(name);
                }
                ins.put(slot, names);
            });
            Map<String, List<String>> outs = new LinkedHashMap<>();
            for (String slot : OpRegistry.get(type).outputs()) {
                outs.put(slot, List.of("out_" + slot.toLowerCase()));
            }
            block.appendOp(type, ins, outs, attrs);
        }
        return program;
    }

    /** Output tensors by slot. */
    Map<String, Tensor> run() {
        Program p = program();
        Map<String, Tensor> feed = new LinkedHashMap<>();
        inputs.forEach((slot, ts) -> {
            for (int j = 0; j < ts.size(); j++) {
                feed.put(slot.toLowerCase() + "_" + j, ts.get(j));
            }
        });
        List<String> fetch = OpRegistry.get(type).outputs().stream().map(s -> "out_" + s.toLowerCase()).toList();
        Map<String, Tensor> fetched = executor.run(p, new Scope(), feed, fetch);
        Map<String, Tensor> bySlot = new LinkedHashMap<>();
        for (String slot : OpRegistry.get(type).outputs()) {
            bySlot.put(slot, fetched.get("out_" + slot.toLowerCase()));
        }
        return bySlot;
    }

    Tensor run(String outSlot) {
        return run().get(outSlot);
    }
}
