/**
 * Where a process sits in a job, read from the launcher that started it. {@link org.fleet4j.fleet.role.EnvironmentRoleMaker}
 * picks the first launcher whose variables are present:
 *
 * <table>
 * <caption>Launchers and the variables read</caption>
 * <tr><th>launcher</th><th>rank / world</th><th>local rank / local world</th><th>node</th><th>rendezvous (rank 0 hosts the store)</th></tr>
 * <tr><td>fleetrun</td><td>FLEET_RANK / FLEET_WORLD_SIZE</td><td>FLEET_LOCAL_RANK / FLEET_LOCAL_WORLD_SIZE</td>
 *     <td>FLEET_NODE_RANK / FLEET_NNODES</td><td>FLEET_MASTER</td></tr>
 * <tr><td>Paddle's launcher</td><td>PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM</td><td>from PADDLE_TRAINER_ENDPOINTS
 *     (checked against PADDLE_RANK_IN_NODE)</td><td>distinct hosts of the endpoints</td><td>the first endpoint</td></tr>
 * <tr><td>torchrun</td><td>RANK / WORLD_SIZE</td><td>LOCAL_RANK / LOCAL_WORLD_SIZE</td><td>GROUP_RANK</td>
 *     <td>MASTER_ADDR:MASTER_PORT</td></tr>
 * <tr><td>Open MPI</td><td>OMPI_COMM_WORLD_RANK / _SIZE</td><td>OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE</td>
 *     <td>rank / local size</td><td>FLEET_MASTER or MASTER_ADDR:MASTER_PORT, exported with mpirun -x</td></tr>
 * <tr><td>Slurm</td><td>SLURM_PROCID / SLURM_NTASKS</td><td>SLURM_LOCALID / tasks per node</td>
 *     <td>SLURM_NODEID / SLURM_NNODES</td><td>FLEET_MASTER or MASTER_ADDR:MASTER_PORT</td></tr>
 * </table>
 *
 * <p>The fleetrun and Paddle role makers also read Paddle's parameter-server variables: TRAINING_ROLE (TRAINER, the
 * default, or PSERVER), PADDLE_PSERVERS_IP_PORT_LIST, and a server's own POD_IP:PADDLE_PORT, whose position in that
 * list is its server index; a lone TRAINING_ROLE also selects Paddle's role maker.
 *
 * <p>With none of them the process is a world of one. Every rank of a job needs the same number of ranks per node;
 * a missing, malformed or inconsistent variable is an {@link java.lang.IllegalArgumentException} naming it. Other
 * schedulers implement {@link org.fleet4j.fleet.role.RoleMaker} or use {@link org.fleet4j.fleet.role.UserDefinedRoleMaker}.
 *
 * <p>A role maker reads only the variables it is given ({@link org.fleet4j.fleet.role.EnvironmentRoleMaker#fromSystem}
 * gives the process's environment) and imports only {@code org.fleet4j.cluster.Role}.
 */
package org.fleet4j.fleet.role;
