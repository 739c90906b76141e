package org.fleet4j.fleet.role;

import java.util.Map;

/**
 * A scheduler or launcher whose environment variables say where a process sits in a job: a Kubernetes operator's
 * pod, a Slurm task, an MPI rank, a torchrun worker. Each one is registered beside its code with
 * {@code @AutoService(ClusterEnvironment.class)}; {@link ClusterDetector} asks them in {@link #order()} and the first
 * whose variables are present describes the process, both for {@code bin/fleetrun} (how many ranks this node starts,
 * where the master is) and for {@code Fleet.init} (this process's role).
 */
public interface ClusterEnvironment {
    /** What the user knows it as, e.g. "PyTorchJob (Kubeflow training-operator)". */
    String name();

    /**
     * Lower is asked first. A launcher that starts ranks inside a scheduler's allocation (fleetrun, torchrun, mpirun)
     * comes before the scheduler, whose variables its ranks inherit.
     */
    int order();

    /** Whether this environment's own variables are there, complete or not. */
    boolean isPresent(Map<String, String> env);

    /**
     * Where the process sits; called only when {@link #isPresent} is true.
     *
     * @throws IllegalArgumentException naming the variable that is missing, malformed or inconsistent: an environment
     *                                  that looks like a cluster but is incomplete is never taken for a job of one
     */
    Placement placement(Map<String, String> env);
}
