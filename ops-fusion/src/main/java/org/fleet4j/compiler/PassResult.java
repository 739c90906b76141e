package org.fleet4j.compiler;

import java.util.List;
import org.fleet4j.core.ir.Program;

/** A pass's output program and what it did, one line per rewrite ("fused elementwise_add + relu -> ..."). */
public record PassResult(Program program, List<String> notes) {
    public PassResult {
        notes = List.copyOf(notes);
    }

    public static PassResult unchanged(Program program, String why) {
        return new PassResult(program, List.of(why));
    }
}
