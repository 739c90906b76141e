package org.fleet4j.pserver.table;

/**
 * What a server holds of one table: rows (sparse) or elements (dense), and off-heap bytes; {@code queueDepth} is the
 * number of calls for the table that a transport has under way at the moment (the table itself queues nothing). A
 * sparse table also says how many ids its admission filter is counting without a row ({@code pending}) and how many
 * rows its shrinks evicted and bytes they freed since the server started.
 */
public record TableStats(String table, String kind, long keys, long bytes, int queueDepth, long pending, long evicted,
                         long freedBytes) {
    /** The table's own figures, before a transport adds its queue depth. */
    public TableStats(String table, String kind, long keys, long bytes) {
        this(table, kind, keys, bytes, 0, 0, 0, 0);
    }

    public TableStats(String table, String kind, long keys, long bytes, int queueDepth) {
        this(table, kind, keys, bytes, queueDepth, 0, 0, 0);
    }

    public TableStats withQueueDepth(int depth) {
        return new TableStats(table, kind, keys, bytes, depth, pending, evicted, freedBytes);
    }
}
