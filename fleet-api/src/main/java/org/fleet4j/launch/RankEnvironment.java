package org.fleet4j.launch;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.core.device.Devices;
import org.fleet4j.fleet.metrics.RankMetrics;
import org.fleet4j.pserver.grpcpp.EndpointMap;

/**
 * The role variables each process reads: Fleet4J's own ({@code FLEET_*}) and Paddle's, so programs written
 * for {@code paddle.distributed.launch} find what they expect. A trainer gets TRAINING_ROLE=TRAINER with its rank in
 * the data-parallel world; a parameter server gets TRAINING_ROLE=PSERVER, its endpoint as POD_IP and PADDLE_PORT, and
 * no FLEET_RANK or FLEET_WORLD_SIZE (those describe the trainers' world). Both get PADDLE_PSERVERS_IP_PORT_LIST and
 * FLEET_PS_ENDPOINT_MAP (the servers' grpc++ data ports) when the job has servers.
 */
public final class RankEnvironment {
    /** Variables that only some jobs or some kinds of process get; an inherited stale value must not reach them. */
    public static final List<String> OPTIONAL = List.of("FLEET_STRATEGY", "FLEET_DEVICE_ID", "PADDLE_TRAINER_ENDPOINTS",
            JobToken.FILE_ENV, "FLEET_RANK", "FLEET_WORLD_SIZE", "FLEET_LOCAL_RANK", "FLEET_LOCAL_WORLD_SIZE", "FLEET_NODE_RANK",
            "FLEET_NNODES", "FLEET_MASTER", "PADDLE_TRAINER_ID", "PADDLE_CURRENT_ENDPOINT", "PADDLE_RANK_IN_NODE",
            "PADDLE_PSERVERS_IP_PORT_LIST", "POD_IP", "PADDLE_PORT", EndpointMap.ENV, RankMetrics.FILE_ENV);

    private RankEnvironment() {
    }

    /**
     * @param strategy absolute path of the strategy file, or null
     */
    public static Map<String, String> of(ClusterLayout layout, ServerLayout servers, DeviceSelection devices, int localRank,
                                         String jobId, Path logDir, LogLevel logLevel, Path strategy) {
        Map<String, String> env = new LinkedHashMap<>();
        int rank = layout.globalRank(localRank);
        env.put("FLEET_RANK", Integer.toString(rank));
        env.put("FLEET_WORLD_SIZE", Integer.toString(layout.worldSize()));
        env.put("FLEET_LOCAL_RANK", Integer.toString(localRank));
        env.put("FLEET_LOCAL_WORLD_SIZE", Integer.toString(layout.nprocPerNode()));
        env.put("FLEET_NODE_RANK", Integer.toString(layout.nodeRank()));
        env.put("FLEET_NNODES", Integer.toString(layout.nnodes()));
        env.put("FLEET_MASTER", layout.master().toString());
        env.putAll(common(layout.host(), jobId, logDir, logLevel, strategy));
        env.put(Devices.DEVICE_ENV, devices.deviceOf(localRank));
        if (devices.isGpu()) {
            env.put("FLEET_DEVICE_ID", Integer.toString(devices.gpuIds().get(localRank)));
        }
        env.put("PADDLE_TRAINER_ID", Integer.toString(rank));
        env.put("PADDLE_TRAINERS_NUM", Integer.toString(layout.worldSize()));
        layout.allEndpoints().ifPresent(endpoints -> env.put("PADDLE_TRAINER_ENDPOINTS", String.join(",", endpoints)));
        env.put("PADDLE_CURRENT_ENDPOINT", layout.endpoint(localRank).toString());
        env.put("PADDLE_RANK_IN_NODE", Integer.toString(localRank));
        env.put("TRAINING_ROLE", Role.Kind.TRAINER.name());
        if (!servers.isEmpty()) {
            HostPort own = layout.endpoint(localRank);
            env.put("PADDLE_PSERVERS_IP_PORT_LIST", servers.endpointList());
            env.put(EndpointMap.ENV, servers.dataEndpointMap());
            env.put("POD_IP", own.host());
            env.put("PADDLE_PORT", Integer.toString(own.port()));
        }
        return env;
    }

    /** Parameter server {@code index} of {@code servers}, serving the trainers of {@code layout}; servers run on the CPU. */
    public static Map<String, String> server(ClusterLayout layout, ServerLayout servers, int index, String jobId, Path logDir,
                                             LogLevel logLevel, Path strategy) {
        HostPort own = servers.endpoints().get(index);
        Map<String, String> env = new LinkedHashMap<>(common(own.host(), jobId, logDir, logLevel, strategy));
        env.put(Devices.DEVICE_ENV, "cpu");
        env.put("TRAINING_ROLE", Role.Kind.PSERVER.name());
        env.put("PADDLE_PSERVERS_IP_PORT_LIST", servers.endpointList());
        env.put(EndpointMap.ENV, servers.dataEndpointMap());
        env.put("POD_IP", own.host());
        env.put("PADDLE_PORT", Integer.toString(own.port()));
        env.put("PADDLE_TRAINERS_NUM", Integer.toString(layout.worldSize()));
        layout.allEndpoints().ifPresent(endpoints -> env.put("PADDLE_TRAINER_ENDPOINTS", String.join(",", endpoints)));
        return env;
    }

    /** What every process of the job gets, whatever its kind. */
    private static Map<String, String> common(String host, String jobId, Path logDir, LogLevel logLevel, Path strategy) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("FLEET_HOST", host);
        env.put("FLEET_JOB_ID", jobId);
        env.put("FLEET_LOG_DIR", logDir.toString());
        env.put("FLEET_LOG_LEVEL", logLevel.value());
        if (strategy != null) {
            env.put("FLEET_STRATEGY", strategy.toString());
        }
        return env;
    }
}
