/**
 * The TCP backend, for ranks on any hosts: {@link TcpProcessGroup} runs allreduce as a ring reduce-scatter and
 * allgather (broadcast and reduce as pipelined chains) in one {@code Exchange} per operation over a full mesh of
 * non-blocking sockets ({@code TcpTransport}), driven by the thread that runs the operation: no event-loop thread is on
 * the data path. {@code TcpListener} admits a connection only after a job-token handshake both ways;
 * {@code CongestionControl} sets a socket's congestion control where Linux allows. {@link TcpBackend} registers the
 * backend. It imports {@code org.fleet4j.collective}, {@code .group}, {@code .reduce} and {@code org.fleet4j.cluster}
 * (JobToken, RateLimitedLog).
 */
package org.fleet4j.collective.tcp;
