/**
 * The shared-memory backend, for the ranks of one host: {@link ShmProcessGroup} runs collectives through a
 * memory-mapped file in rounds of one slot per rank, each flag on its own cache line ({@code ShmLayout}); a buffer from
 * {@code registeredBuffer} lives in a file every rank maps ({@code ShmRegion}) and is reduced in place without staging.
 * {@link ShmFiles} names those files and removes the ones a dead creator left; {@link ShmBackend} registers the
 * backend. It imports {@code org.fleet4j.collective}, {@code .group} and {@code .reduce}; no socket is on its data
 * path.
 */
package org.fleet4j.collective.shm;
