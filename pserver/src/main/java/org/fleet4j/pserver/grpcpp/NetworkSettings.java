package org.fleet4j.pserver.grpcpp;

import java.util.Locale;
import java.util.Map;
import org.fleet4j.text.Quoted;

/**
 * How many network threads one side of grpc++ runs, whether they busy-poll and whether they are pinned to cores,
 * from the environment with DeepRec's names: on servers {@code NETWORK_PS_CORE_NUMBER}, {@code PS_ENABLE_POLLING},
 * {@code PS_DISABLE_PIN_CORES}; on workers {@code NETWORK_WORKER_CORE_NUMBER}, {@code WORKER_ENABLE_POLLING},
 * {@code WORKER_DISABLE_PIN_CORES}. Threads default to min(8, connections) on a server and min(2, connections) on a
 * worker, as in DeepRec, and never to more than the CPUs the process may run on: DeepRec's default assumes a server
 * with cores to spare, and on fewer cores the extra threads only share them (each pinned thread to a CPU another
 * already holds) and hand each other more of every fused frame: ps_perf with 4 workers on 2 cores moved 2.44 M keys/s
 * with 4 server threads against 3.2 M with 2. A worker whose host has no more CPUs than the job has processes there
 * ({@link #processesOnHost}) runs none by default: its calling threads do the I/O, as with 0 set (see docs/PSERVER.md,
 * "Threads", for the figures). A variable that is set wins, above the CPUs too. Polling is off and pinning on by
 * default, as in DeepRec.
 */
public record NetworkSettings(int threads, boolean busyPoll, boolean pinCores) {
    static final int MAX_THREADS = 256;

    public NetworkSettings {
        if (threads < 0 || threads > MAX_THREADS) {
            throw new IllegalArgumentException("grpc++ network threads must be in [0, " + MAX_THREADS + "], got "
                    + threads);
        }
    }

    /** The side of a connection, with its variables' names and its default thread cap. */
    public enum Side {
        SERVER("NETWORK_PS_CORE_NUMBER", "PS_ENABLE_POLLING", "PS_DISABLE_PIN_CORES", 8, 1),
        /** A worker may run no network threads (0): its calling threads then do their connections' I/O. */
        WORKER("NETWORK_WORKER_CORE_NUMBER", "WORKER_ENABLE_POLLING", "WORKER_DISABLE_PIN_CORES", 2, 0);

        final String threadsVar;
        final String pollingVar;
        final String noPinVar;
        final int defaultCap;
        final int minThreads;

        Side(String threadsVar, String pollingVar, String noPinVar, int defaultCap, int minThreads) {
            this.threadsVar = threadsVar;
            this.pollingVar = pollingVar;
            this.noPinVar = noPinVar;
            this.defaultCap = defaultCap;
            this.minThreads = minThreads;
        }
    }

    /**
     * The settings of {@code side} from {@code env}; {@code connections} is what the default thread count is capped
     * by (a server: its workers; a worker: the connections it opens). A bad value fails naming the variable and the
     * values it allows.
     */
    public static NetworkSettings fromEnvironment(Map<String, String> env, Side side, int connections) {
        return fromEnvironment(env, side, connections, Runtime.getRuntime().availableProcessors());
    }

    /** As {@link #fromEnvironment(Map, Side, int)} on a process that may run on {@code cpus} CPUs. */
    static NetworkSettings fromEnvironment(Map<String, String> env, Side side, int connections, int cpus) {
        int threads = Math.max(1, Math.min(Math.min(side.defaultCap, connections), cpus));
        if (side.minThreads == 0 && processesOnHost(env) >= cpus) {
            // every CPU already has one of the job's processes: a network thread would only share a core with a step
            // thread, and each call would pay two hand-offs between them (the CPU the server lacks)
            threads = 0;
        }
        String t = env.get(side.threadsVar);
        if (t != null && !t.isBlank()) {
            threads = parseThreads(side.threadsVar, t, side.minThreads);
        }
        boolean polling = parseBool(side.pollingVar, env.get(side.pollingVar), false);
        boolean noPin = parseBool(side.noPinVar, env.get(side.noPinVar), false);
        return new NetworkSettings(threads, polling, !noPin);
    }

    /**
     * The job's processes on this host, from what {@code bin/fleetrun} gives a worker: its node's workers
     * ({@code FLEET_LOCAL_WORLD_SIZE}) and the servers of {@code PADDLE_PSERVERS_IP_PORT_LIST} on its host
     * ({@code POD_IP}). 1 when the launcher did not say (a process started by hand counts only itself).
     */
    static int processesOnHost(Map<String, String> env) {
        int workers = launcherCount(env, "FLEET_LOCAL_WORLD_SIZE");
        String host = env.get("POD_IP");
        String servers = env.get("PADDLE_PSERVERS_IP_PORT_LIST");
        int local = 0;
        if (host != null && servers != null) {
            for (String endpoint : servers.split(",")) {
                int colon = endpoint.lastIndexOf(':');
                if (colon > 0 && endpoint.substring(0, colon).trim().equals(host.trim())) {
                    local++;
                }
            }
        }
        return workers + local;
    }

    /** A count the launcher gives in {@code var} (workers, processes); 1 when unset, unreadable or below 1. */
    static int launcherCount(Map<String, String> env, String var) {
        try {
            return Math.max(1, Integer.parseInt(env.getOrDefault(var, "1").trim()));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /**
     * Why a worker runs no network threads when {@code NETWORK_WORKER_CORE_NUMBER} is not set (for the dry run and
     * the log): {@code "; none by default: the job's 3 processes on this host fill its 2 CPUs"}, else "".
     */
    static String whyNoWorkerThreads(Map<String, String> env, NetworkSettings worker) {
        String set = env.get(Side.WORKER.threadsVar);
        if (worker.threads() != 0 || (set != null && !set.isBlank())) {
            return "";
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        int processes = processesOnHost(env);
        return "; none by default: the job's " + processes + " process"
                + (processes == 1 ? "" : "es") + " on this host fill its " + cpus + " CPU"
                + (cpus == 1 ? "" : "s") + " (set " + Side.WORKER.threadsVar + " for threads)";
    }

    private static int parseThreads(String var, String value, int min) {
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= min && n <= MAX_THREADS) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the allowed values
        }
        throw new IllegalArgumentException(var + "=" + Quoted.of(value) + " is not a number of network threads; allowed: a"
                + " whole number from " + min + " to " + MAX_THREADS
                + (min == 0 ? " (0: no network threads, the calling threads do the I/O)" : ""));
    }

    private static boolean parseBool(String var, String value, boolean unset) {
        if (value == null || value.isBlank()) {
            return unset;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw new IllegalArgumentException(var + "=" + Quoted.of(value) + " is not allowed; allowed: true,"
                    + " false, 1 or 0");
        };
    }

    /** E.g. {@code 4 network threads, busy polling, pinned to cores}, for logs and the dry run. */
    public String describe() {
        if (threads == 0) {
            return "no network threads (each calling thread does its own I/O), "
                    + (busyPoll ? "busy polling" : "sleeping in epoll");
        }
        return threads + " network thread" + (threads == 1 ? "" : "s") + ", "
                + (busyPoll ? "busy polling" : "sleeping in epoll") + ", "
                + (pinCores ? "pinned to cores" : "not pinned");
    }
}
