/**
 * Where a process sits in a job, read from the scheduler or launcher that started it. Each one is a
 * {@link org.fleet4j.fleet.role.ClusterEnvironment} registered beside its code with {@code @AutoService};
 * {@link org.fleet4j.fleet.role.ClusterDetector} asks them in order and the first whose variables are present gives the
 * {@link org.fleet4j.fleet.role.Placement}: one launcher per node (a Kubernetes pod, a Slurm task alone on its node),
 * whose {@code bin/fleetrun} starts the node's ranks, or one rank or parameter server per process.
 *
 * <table>
 * <caption>Environments, in the order asked</caption>
 * <tr><th>environment</th><th>present when set</th><th>gives</th></tr>
 * <tr><td>fleetrun</td><td>FLEET_WORLD_SIZE</td><td>a rank: FLEET_RANK, FLEET_LOCAL_*, FLEET_NODE_RANK, FLEET_MASTER</td></tr>
 * <tr><td>Paddle's launcher</td><td>PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ENDPOINTS, TRAINING_ROLE</td><td>a trainer or a
 *     parameter server</td></tr>
 * <tr><td>torchrun</td><td>LOCAL_WORLD_SIZE, LOCAL_RANK, TORCHELASTIC_RUN_ID</td><td>a rank: RANK, WORLD_SIZE, GROUP_RANK,
 *     MASTER_ADDR:MASTER_PORT</td></tr>
 * <tr><td>Volcano</td><td>VC_TASK_INDEX, VC_&lt;TASK&gt;_HOSTS</td><td>a node of the trainers' task; with a ps task, a
 *     server or a trainer</td></tr>
 * <tr><td>PyTorchJob</td><td>WORLD_SIZE, PET_NNODES, PET_NODE_RANK</td><td>a node: PET_NODE_RANK of PET_NNODES,
 *     PET_NPROC_PER_NODE ranks, MASTER_ADDR:MASTER_PORT</td></tr>
 * <tr><td>PaddleJob</td><td>PADDLE_MASTER, PADDLE_NNODES</td><td>a node: PADDLE_RANK or the host name's index</td></tr>
 * <tr><td>JobSet</td><td>JOBSET_NAME, JOB_COMPLETION_INDEX</td><td>a node, with every pod's host name</td></tr>
 * <tr><td>Open MPI, MPICH/Intel MPI</td><td>OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE</td><td>a rank; the master from
 *     FLEET_MASTER</td></tr>
 * <tr><td>Slurm</td><td>SLURM_JOB_ID, SLURM_PROCID</td><td>a node (one task per node) or a rank; the master on the
 *     first node of SLURM_JOB_NODELIST</td></tr>
 * </table>
 *
 * <p>With none of them the process is a world of one. An environment that is present but incomplete (a WORLD_SIZE of
 * 2 without MASTER_ADDR, a Slurm job without SLURM_PROCID) is an {@link java.lang.IllegalArgumentException} naming
 * the variable, never a job of one. Other schedulers implement {@link org.fleet4j.fleet.role.ClusterEnvironment}, or a
 * {@link org.fleet4j.fleet.role.RoleMaker}, or use {@link org.fleet4j.fleet.role.UserDefinedRoleMaker}.
 *
 * <p>The environments read only the variables they are given and import only {@code org.fleet4j.cluster.Role}.
 */
package org.fleet4j.fleet.role;
