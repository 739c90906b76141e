package org.fleet4j.core.ir;

/** What a variable holds: a dense tensor, or the rows of a sparse gradient (Paddle's SelectedRows). */
public enum VarKind {
    DENSE, SELECTED_ROWS
}
