package org.fleet4j.compiler;

import java.util.List;
import org.fleet4j.core.ir.Program;

/** The compiled program and a report per pass, in pipeline order. */
public record Compilation(Program program, List<PassReport> reports) {
    public Compilation {
        reports = List.copyOf(reports);
    }

    /** A readable account for logs and --dry_run: the pipeline, then each pass with what it did. */
    public String describe() {
        StringBuilder sb = new StringBuilder("compiler pipeline: ");
        sb.append(reports.isEmpty() ? "(no passes)" : String.join(" -> ", reports.stream().map(PassReport::pass).toList()));
        sb.append('\n');
        for (PassReport r : reports) {
            sb.append("  ").append(r.pass()).append(": ").append(r.opsBefore()).append(" ops -> ").append(r.opsAfter())
                    .append(" ops\n");
            for (String note : r.notes()) {
                sb.append("    ").append(note).append('\n');
            }
        }
        return sb.toString();
    }
}
