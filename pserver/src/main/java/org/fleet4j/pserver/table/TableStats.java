package org.fleet4j.pserver.table;

/**
 * What a server holds of one table: rows (sparse) or elements (dense), and off-heap bytes; {@code queueDepth} is the
 * number of calls for the table that a transport has under way at the moment (the table itself queues nothing).
 */
public record TableStats(String table, String kind, long keys, long bytes, int queueDepth) {
    /** The table's own figures, before a transport adds its queue depth. */
    public TableStats(String table, String kind, long keys, long bytes) {
        this(table, kind, keys, bytes, 0);
    }

    public TableStats withQueueDepth(int depth) {
        return new TableStats(table, kind, keys, bytes, depth);
    }
}
