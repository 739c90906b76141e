package org.fleet4j.ops.fused;

/** Registers the compiler's own op types once, before any pass inserts them or any executor prepares them. */
public final class FusedOps {
    private static boolean registered;

    private FusedOps() {
    }

    public static synchronized void register() {
        if (!registered) {
            FusedElewiseAddActOp.register();
            FusedOptimizerOps.register();
            BucketOps.register();
            FusedBnActOp.register();
            AllreduceCastOp.register();
            SyncBatchNormOps.register();
            registered = true;
        }
    }
}
