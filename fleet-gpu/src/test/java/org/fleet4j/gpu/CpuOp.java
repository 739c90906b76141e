package org.fleet4j.gpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.Tensor;

/** Runs one fleet-core op on the CPU through the Executor: the reference every GPU kernel is held to. */
final class CpuOp {
    private CpuOp() {
    }

    /** Inputs by slot (one tensor each), attributes, and the output slots to fetch; returns them by slot. */
    static Map<String, Tensor> run(String type, Map<String, Tensor> inputs, Map<String, Object> attrs, List<String> outSlots) {
        Program program = new Program();
        var block = program.globalBlock();
        Map<String, List<String>> ins = new LinkedHashMap<>();
        Map<String, Tensor> feed = new LinkedHashMap<>();
        inputs.forEach((slot, t) -> {
            String name = "in_" + slot.toLowerCase();
            block.createVar(name, t.dtype(), t.shape()).setData(true);
            ins.put(slot, List.of(name));
            feed.put(name, t.copy());
        });
        Map<String, List<String>> outs = new LinkedHashMap<>();
        List<String> fetch = new ArrayList<>();
        for (String slot : outSlots) {
            outs.put(slot, List.of("out_" + slot.toLowerCase()));
            fetch.add("out_" + slot.toLowerCase());
        }
        block.appendOp(type, ins, outs, attrs);
        Map<String, Tensor> fetched = new Executor().run(program, new Scope(), feed, fetch);
        Map<String, Tensor> bySlot = new LinkedHashMap<>();
        for (String slot : outSlots) {
            bySlot.put(slot, fetched.get("out_" + slot.toLowerCase()));
        }
        return bySlot;
    }
}
