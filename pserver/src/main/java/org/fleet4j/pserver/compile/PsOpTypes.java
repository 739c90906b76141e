package org.fleet4j.pserver.compile;

/** The op types the PS compile step writes into a worker program; their kernels are in {@code pserver.worker}. */
public final class PsOpTypes {
    /** Out = dense parameter {@code param}, read from its blocks on the servers (attrs: param, shape). */
    public static final String PULL_DENSE = "pull_dense";
    /** Sends Grad, the gradient of dense parameter {@code param}, to the servers of its blocks (attrs: param). */
    public static final String PUSH_DENSE = "push_dense";
    /** Out[i] = row Ids[i] of sparse table {@code table}, each distinct id pulled once (attrs: table, dim, padding_idx). */
    public static final String PULL_SPARSE = "pull_sparse";
    /** Sends Grad (Out's gradient), duplicate ids' rows summed, to the servers of the ids (attrs as pull_sparse). */
    public static final String PUSH_SPARSE = "push_sparse";
    /**
     * The last op of a step in sync, half-async and geo modes (Paddle's send_barrier): in sync and half-async it returns
     * once every worker's pushes of the step were applied, so no worker pulls for the next step before them; in geo
     * it counts the step and exchanges deltas every k_steps. Async mode has none.
     */
    public static final String SEND_BARRIER = "send_barrier";
    /**
     * An inference model's lookup in a sparse table gathered from the servers, without servers: Out[i] = the row of W
     * whose id in Keys (ascending) is Ids[i]; an id the table lacks gets the row the servers would have created
     * (attrs: dim, padding_idx, and the table's initializer: init, init_a, init_b, init_seed).
     */
    public static final String LOOKUP_SPARSE_TABLE = "lookup_sparse_table";

    private PsOpTypes() {
    }
}
