/**
 * The {@code grpc} protocol: {@link GrpcTransport}, grpc-java over (shaded) Netty serving
 * {@code parameter_server.proto} (generated into {@code .proto}) so that any gRPC client can call a server.
 * {@code GrpcPsServer} answers calls from a {@code TableShard} on its event loops ({@code ParameterServerService},
 * {@code Barriers}), behind the job-token check ({@code JobTokenCheck}; {@code CallSigner} on the worker's side);
 * {@code GrpcPsConnection} is the worker's channel; {@code Wire} moves tensors in and out of {@code bytes} fields
 * without copies; {@link DataPort} lets grpc++ add its data port beside the service. Each server and connection owns
 * its threads ({@code NetworkThreads}). It imports {@code .transport}, {@code .table}, {@code org.fleet4j.cluster} and
 * fleet-core's {@code io}.
 */
package org.fleet4j.pserver.grpc;
