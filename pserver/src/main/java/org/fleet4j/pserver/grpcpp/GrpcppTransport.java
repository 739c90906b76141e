package org.fleet4j.pserver.grpcpp;

import java.nio.file.Path;
import java.util.Map;
import org.fleet4j.pserver.grpc.GrpcTransport;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;

/**
 * The {@code grpc++} protocol (DeepRec's GRPC++ for Fleet4J): control calls over the grpc protocol's service, pulls
 * and pushes over a data port of its own framing on Netty's native epoll transport, sharing-nothing network threads
 * that may busy-poll and are pinned to cores, and tensors sent from and applied in place. See docs/PSERVER.md,
 * "Transports". Found by the no-argument constructor, which reads the environment and {@code .endpoint_map} of the
 * working directory when a server starts or a worker connects.
 */
public final class GrpcppTransport implements PsTransport {
    public static final String PROTOCOL = "grpc++";

    private final String protocol;
    private final boolean overlapPushes;
    private final EndpointMap map;
    private final NetworkSettings server;
    private final NetworkSettings worker;

    /** From the environment (read when used). */
    public GrpcppTransport() {
        this(null, null, null);
    }

    /** With the map and settings given; null ones come from the environment. */
    public GrpcppTransport(EndpointMap map, NetworkSettings server, NetworkSettings worker) {
        this(PROTOCOL, false, map, server, worker);
    }

    private GrpcppTransport(String protocol, boolean overlapPushes, EndpointMap map, NetworkSettings server,
                            NetworkSettings worker) {
        this.protocol = protocol;
        this.overlapPushes = overlapPushes;
        this.map = map;
        this.server = server;
        this.worker = worker;
    }

    /**
     * This data path for a pull/push protocol (star_server, star_server_lite), settings from the environment: Hello
     * answers {@code protocol}, a worker's fused steps are one frame each way per server, and a worker finds a data
     * port that no endpoint map names through the server's Hello. {@code overlapPushes}: a push is held and sent
     * right behind the next pull (one step stale).
     */
    public static GrpcppTransport forPullPush(String protocol, boolean overlapPushes) {
        return new GrpcppTransport(protocol, overlapPushes, null, null, null);
    }

    @Override
    public String protocol() {
        return protocol;
    }

    @Override
    public String describe(Map<String, String> env, int workers) {
        NetworkSettings servers = NetworkSettings.fromEnvironment(env, NetworkSettings.Side.SERVER, workers);
        NetworkSettings workerSide = NetworkSettings.fromEnvironment(env, NetworkSettings.Side.WORKER,
                servers.threads());
        return "transport: " + protocol + " on "
                + (NetworkLoops.epoll() ? "Netty's native epoll" : "NIO (no epoll here)")
                + "; control calls over gRPC on the servers' endpoints, pulls and pushes on their data ports ("
                + EndpointMap.discover(Path.of(""), env).source() + ")\n"
                + "  servers: " + servers.describe() + " (NETWORK_PS_CORE_NUMBER, PS_ENABLE_POLLING,"
                + " PS_DISABLE_PIN_CORES); each thread owns its share of every table's rows and blocks\n"
                + "  workers: per server " + workerSide.describe() + " (NETWORK_WORKER_CORE_NUMBER,"
                + " WORKER_ENABLE_POLLING, WORKER_DISABLE_PIN_CORES), one data connection per server thread"
                + NetworkSettings.whyNoWorkerThreads(env, workerSide) + "\n";
    }

    @Override
    public PsServer serve(TableShard shard, PsOptions options) {
        NetworkSettings settings = server != null ? server
                : NetworkSettings.fromEnvironment(System.getenv(), NetworkSettings.Side.SERVER, workers());
        return new GrpcppServer(protocol, shard, options, map(), settings);
    }

    @Override
    public PsConnection connect(String endpoint, PsOptions options) {
        NetworkSettings settings = worker != null ? worker
                : NetworkSettings.fromEnvironment(System.getenv(), NetworkSettings.Side.WORKER, 2);
        EndpointMap m = map();
        String data = m.dataEndpoint(endpoint).orElse(null);
        // grpc++ asks for the map, as its issue says; the pull/push protocols served on one port before, so their
        // workers keep working without one: the server's Hello names its data port
        if (data == null && PROTOCOL.equals(protocol)) {
            // a server of another protocol is named as such (Hello on the control port) before the missing data port
            GrpcTransport.connectControl(protocol, endpoint, options).calls().close();
            throw new IllegalArgumentException("no grpc++ data port is known for parameter server " + endpoint + " ("
                    + m.source() + "); list it in " + EndpointMap.FILE + " as " + endpoint + "=HOST:DATA_PORT, or start"
                    + " the job with bin/fleetrun, which publishes " + EndpointMap.ENV);
        }
        return GrpcppConnection.open(protocol, endpoint, data, options, settings, overlapPushes);
    }

    /** The data endpoint of a grpc++ server started here (for an endpoint map when its data port was a free one). */
    public static String dataEndpointOf(PsServer server) {
        if (server instanceof GrpcppServer s) {
            return s.dataEndpoint();
        }
        throw new IllegalArgumentException("not a grpc++ server: " + server);
    }

    private EndpointMap map() {
        return map != null ? map : EndpointMap.discover(Path.of(""), System.getenv());
    }

    /** A server's connections: its workers (PADDLE_TRAINERS_NUM; 1 when unset or unreadable). */
    private static int workers() {
        return NetworkSettings.launcherCount(System.getenv(), "PADDLE_TRAINERS_NUM");
    }
}
