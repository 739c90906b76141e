package org.fleet4j.launch;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.collective.JobToken;
import org.fleet4j.core.device.Devices;

/**
 * The role variables each rank reads: Fleet4J's own ({@code FLEET_*}) and Paddle's, so programs written
 * for {@code paddle.distributed.launch} find what they expect.
 */
public final class RankEnvironment {
    /** Variables that are only set for some jobs; an inherited stale value must not reach the ranks. */
    public static final List<String> OPTIONAL = List.of("FLEET_STRATEGY", "FLEET_DEVICE_ID", "PADDLE_TRAINER_ENDPOINTS",
            JobToken.FILE_ENV);

    private RankEnvironment() {
    }

    /**
     * @param strategy absolute path of the strategy file, or null
     */
    public static Map<String, String> of(ClusterLayout layout, DeviceSelection devices, int localRank, String jobId, Path logDir,
                                         LogLevel logLevel, Path strategy) {
        Map<String, String> env = new LinkedHashMap<>();
        int rank = layout.globalRank(localRank);
        env.put("FLEET_RANK", Integer.toString(rank));
        env.put("FLEET_WORLD_SIZE", Integer.toString(layout.worldSize()));
        env.put("FLEET_LOCAL_RANK", Integer.toString(localRank));
        env.put("FLEET_LOCAL_WORLD_SIZE", Integer.toString(layout.nprocPerNode()));
        env.put("FLEET_NODE_RANK", Integer.toString(layout.nodeRank()));
        env.put("FLEET_NNODES", Integer.toString(layout.nnodes()));
        env.put("FLEET_MASTER", layout.master().toString());
        env.put("FLEET_HOST", layout.host());
        env.put("FLEET_JOB_ID", jobId);
        env.put("FLEET_LOG_DIR", logDir.toString());
        env.put("FLEET_LOG_LEVEL", logLevel.value());
        env.put(Devices.DEVICE_ENV, devices.deviceOf(localRank));
        if (strategy != null) {
            env.put("FLEET_STRATEGY", strategy.toString());
        }
        if (devices.isGpu()) {
            env.put("FLEET_DEVICE_ID", Integer.toString(devices.gpuIds().get(localRank)));
        }
        env.put("PADDLE_TRAINER_ID", Integer.toString(rank));
        env.put("PADDLE_TRAINERS_NUM", Integer.toString(layout.worldSize()));
        layout.allEndpoints().ifPresent(endpoints -> env.put("PADDLE_TRAINER_ENDPOINTS", String.join(",", endpoints)));
        env.put("PADDLE_CURRENT_ENDPOINT", layout.endpoint(localRank).toString());
        env.put("PADDLE_RANK_IN_NODE", Integer.toString(localRank));
        env.put("TRAINING_ROLE", "TRAINER");
        return env;
    }
}
