package org.fleet4j.pserver.table;

/** A request names a table, block or size the server does not have; the message names it and what exists. */
public class TableException extends RuntimeException {
    public TableException(String message) {
        super(message);
    }
}
