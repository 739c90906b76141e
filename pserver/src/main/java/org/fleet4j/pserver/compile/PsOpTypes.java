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
     * {@code tensor_fuse}: the step's pulls in one op at the start of the program, one message per server: Dense[k] =
     * dense parameter params[k] (shape: ranks[k] longs of the flat shapes), Out[k] = the rows of Ids[k] in sparse table
     * tables[k] (dims[k], padding_idx[k]), each distinct id pulled once.
     */
    public static final String PULL_FUSED = "pull_fused";
    /**
     * {@code tensor_fuse}: the step's pushes in one op after backward, one message per server: DenseGrad[k] for
     * params[k], Grad[k] (the gradient of pull_fused's Out[k]) for the ids Ids[k] of tables[k], duplicates summed.
     */
    public static final String PUSH_FUSED = "push_fused";
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
