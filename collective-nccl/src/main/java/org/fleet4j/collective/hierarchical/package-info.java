/**
 * The hierarchical backend, for ranks on several hosts with several ranks each: {@link HierarchicalProcessGroup}
 * reduces inside each host over shared memory, allreduces among one leader per host over TCP and broadcasts back inside
 * each host; its other operations run on a flat TCP group. {@link HierarchicalBackend} registers it as a
 * {@code BackendProvider}. It opens its shm and tcp parts by backend name through {@code ProcessGroups.create}, so it
 * imports {@code org.fleet4j.collective}, {@code .group} and {@code .reduce}, never the shm or tcp packages.
 */
package org.fleet4j.collective.hierarchical;
