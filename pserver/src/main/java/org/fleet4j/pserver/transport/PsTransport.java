package org.fleet4j.pserver.transport;

import java.util.Map;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.text.Quoted;

/**
 * A wire protocol between workers and parameter servers ({@code grpc}, {@code grpc++}, {@code star_server},
 * {@code star_server_lite}), found through {@link ServiceLoader} by the strategy's {@code protocol}. Whatever the
 * protocol, a server proves and checks the options' job token on every call without sending it, every call has the
 * options' deadline, a failure is a {@link PsException} naming the call and the server's endpoint, and closing a
 * server or connection leaves no thread of it running.
 */
public interface PsTransport {
    /** The strategy's name for this protocol. */
    String protocol();

    /** Serves {@code shard} on {@code options.endpoint()} until {@link PsServer#close()} or a worker's stop. */
    PsServer serve(TableShard shard, PsOptions options);

    /** Connects to the server at {@code endpoint} (host:port). */
    PsConnection connect(String endpoint, PsOptions options);

    /**
     * What this protocol runs with in a job of {@code workers} workers, from the environment {@code env} of this
     * process (for the effective strategy and {@code --dry_run}); a bad setting fails naming it.
     */
    default String describe(Map<String, String> env, int workers) {
        return "transport: " + protocol() + "\n";
    }

    /**
     * Connects to every server of {@code endpoints}, in order; if one fails, the ones already open are closed and the
     * failure, naming that server, is thrown.
     */
    default List<PsConnection> connectAll(List<String> endpoints, PsOptions options) {
        List<PsConnection> connections = new ArrayList<>();
        try {
            for (String endpoint : endpoints) {
                connections.add(connect(endpoint, options.withEndpoint(endpoint)));
            }
        } catch (RuntimeException e) {
            connections.forEach(PsConnection::close);
            throw e;
        }
        return connections;
    }

    /** The transport registered for {@code protocol}; an unknown name fails listing the registered ones. */
    static PsTransport forProtocol(String protocol) {
        StringBuilder known = new StringBuilder();
        for (PsTransport t : ServiceLoader.load(PsTransport.class)) {
            if (t.protocol().equals(protocol)) {
                return t;
            }
            known.append(known.isEmpty() ? "" : ", ").append(t.protocol());
        }
        throw new IllegalArgumentException("no parameter-server transport for protocol " + Quoted.of(protocol) + "; registered: ["
                + known + "]");
    }
}
