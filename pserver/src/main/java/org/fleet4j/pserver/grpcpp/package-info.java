/**
 * The {@code grpc++} protocol (DeepRec's GRPC++): {@link GrpcppTransport} keeps the grpc protocol's service for control
 * calls and moves pulls and pushes over a data port of its own framing ({@code Frames}, {@code FrameAssembler}) on
 * Netty's native epoll transport. Network threads ({@code NetworkLoops}, {@link NetworkSettings} from DeepRec's
 * environment variables) share nothing, may busy-poll and be pinned to cores ({@code CorePinning}), and own the shard's
 * tables on the server ({@code DataServer}, {@code ServerCalls}); a worker's {@code GrpcppConnection} sends each
 * request to its owner's thread ({@code DataChannel}s); {@link EndpointMap} finds each server's data port. It imports
 * {@code .grpc}, {@code .transport}, {@code .table} and {@code org.fleet4j.cluster}, and reads the environment.
 */
package org.fleet4j.pserver.grpcpp;
