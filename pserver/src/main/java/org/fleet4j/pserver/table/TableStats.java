package org.fleet4j.pserver.table;

/** What a server holds of one table: rows (sparse) or elements (dense), and off-heap bytes. */
public record TableStats(String table, String kind, long keys, long bytes) {
}
