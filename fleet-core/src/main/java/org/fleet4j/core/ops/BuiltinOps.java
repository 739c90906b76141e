package org.fleet4j.core.ops;

/** Registers every op that ships with Fleet4J. */
final class BuiltinOps {
    private BuiltinOps() {
    }

    static void registerAll() {
        ElementwiseOps.register();
        ActivationOps.register();
        MatmulOps.register();
        LossOps.register();
        ReduceOps.register();
        MetricOps.register();
        InitOps.register();
        OptimizerOps.register();
        ScheduleOps.register();
        ReshapeOp.register();
        ConcatOp.register();
        DropoutOp.register();
        LookupTableOp.register();
        BatchNormOp.register();
        CastOps.register();
        ControlOps.register();
    }
}
