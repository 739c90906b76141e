/**
 * {@link OpenRings}: the process groups of one job's rings as the compiler's {@code RingLayout} lays them out (the
 * default group at ring 0, one more flat group per extra communicator, and the inner, leaders and cross groups of
 * hierarchical allreduce), opened on every rank in one fixed order and handed to the kernels through the job's
 * {@code ExecContext}. It imports {@code org.fleet4j.collective}, {@code org.fleet4j.compiler} (RingLayout) and
 * fleet-core's {@code ops} (ExecContext) only; every group is made from the default group it is given
 * ({@code newGroup}, {@code subgroup}).
 */
package org.fleet4j.fleet.ops;
