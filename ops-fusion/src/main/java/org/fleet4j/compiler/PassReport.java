package org.fleet4j.compiler;

import java.util.List;

/** What one pass of a compilation did: the op count before and after, and its notes. */
public record PassReport(String pass, int opsBefore, int opsAfter, List<String> notes) {
    public PassReport {
        notes = List.copyOf(notes);
    }
}
