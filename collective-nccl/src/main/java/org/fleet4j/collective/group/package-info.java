/**
 * How process groups are opened, and what every backend shares. {@link ProcessGroups} rendezvouses through the
 * {@code TcpStore}, learns each rank's host ({@link Locality}) and opens the default group;
 * {@link AbstractProcessGroup} checks arguments, numbers and fingerprints calls ({@link OpCall}), runs them in issue
 * order on an {@code OpQueue} and stays broken after a failure. Backends register as a {@link BackendProvider} (host
 * memory) or a {@link DeviceBackendProvider} (device memory, through a {@link DeviceCommunicator}) and are found
 * through ServiceLoader; for "auto" each answers a {@link Suitability} and the pick is a {@link BackendChoice}. It
 * imports {@code org.fleet4j.collective} and {@code org.fleet4j.cluster} only: it names no backend and loads no CUDA
 * class.
 */
package org.fleet4j.collective.group;
