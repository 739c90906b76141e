/**
 * The {@code star_server} and {@code star_server_lite} protocols: {@link StarServerTransport} (one pull and one push
 * per server per step, each worker reading its own writes) and {@link StarServerLiteTransport} (a step's push held and
 * sent behind the next pull: values one step stale), both grpc++'s transport under their own name through
 * {@code StarProtocol}, one class per protocol for ServiceLoader. It imports {@code .grpcpp}, {@code .transport} and
 * {@code .table} only.
 */
package org.fleet4j.pserver.star;
