package org.fleet4j.collective.group;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.cluster.Store;
import org.fleet4j.cluster.TcpStore;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;

/**
 * Entry point: rendezvous through the store (which admits only holders of the job token), learn where every rank
 * lives, and open the default group with the backend that locality (or the options) selects.
 */
public final class ProcessGroups {
    static final String DEFAULT_GROUP = "default";

    private ProcessGroups() {
    }

    /** Opens the default group for the role the launcher put in the environment (a world of one without one). */
    public static ProcessGroup init(GroupOptions options) {
        return init(Role.fromEnvironment(), options);
    }

    /**
     * As the launcher would describe it; host and job id come from FLEET_HOST and FLEET_JOB_ID when set, the job
     * token from FLEET_JOB_TOKEN or FLEET_JOB_TOKEN_FILE.
     */
    public static ProcessGroup init(int rank, int worldSize, int localRank, int localWorldSize, int nodeRank,
                                    String masterHostPort, GroupOptions options) {
        Map<String, String> env = System.getenv();
        return init(Role.trainer(rank, worldSize, localRank, localWorldSize, nodeRank, Math.max(nodeRank + 1, worldSize / localWorldSize),
                masterHostPort, env.getOrDefault("FLEET_HOST", "127.0.0.1"), env.getOrDefault("FLEET_JOB_ID", "fleet4j"),
                "ProcessGroups.init"), options);
    }

    /**
     * Opens the default group for {@code role}; the job token comes from FLEET_JOB_TOKEN or FLEET_JOB_TOKEN_FILE (a
     * fresh one for a world of one; with FLEET_INSECURE=1, one derived from the role, with a warning).
     */
    public static ProcessGroup init(Role role, GroupOptions options) {
        System.Logger log = System.getLogger(ProcessGroups.class.getName());
        return init(role, JobToken.fromEnvironment(System.getenv(), role.worldSize(), role.publicJobFacts(),
                warning -> log.log(System.Logger.Level.WARNING, warning)), options);
    }

    /** Opens the default group for {@code role}; the store and the data ports admit only holders of {@code token}. */
    public static ProcessGroup init(Role role, JobToken token, GroupOptions options) {
        Duration timeout = options.timeout();
        Store store;
        if (role.master() == null) {
            store = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), role.jobId(), token, timeout);
        } else {
            InetSocketAddress master = TcpStore.parseHostPort(role.master(), "master address");
            store = role.rank() == 0
                    ? TcpStore.host(new InetSocketAddress(master.getHostString(), master.getPort()), role.jobId(), token, timeout)
                    : TcpStore.connect(master.getHostString(), master.getPort(), role.jobId(), token, timeout);
        }
        try {
            return init(role, token, store, options, true);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /**
     * Opens the default group on a store the caller already has; {@code ownsStore}: closing the group closes it.
     * Only holders of {@code token} may open data connections to it.
     */
    public static ProcessGroup init(Role role, JobToken token, Store store, GroupOptions options, boolean ownsStore) {
        Duration timeout = options.timeout();
        store.setString("job/node/" + role.rank(), Integer.toString(role.nodeRank()));
        List<String> keys = new ArrayList<>();
        for (int r = 0; r < role.worldSize(); r++) {
            keys.add("job/node/" + r);
        }
        store.waitFor(keys, timeout);
        String[] hosts = new String[role.worldSize()];
        int[] ranks = new int[role.worldSize()];
        for (int r = 0; r < role.worldSize(); r++) {
            hosts[r] = "node" + store.getString("job/node/" + r, timeout);
            ranks[r] = r;
        }
        GroupContext ctx = new GroupContext(role.jobId(), DEFAULT_GROUP, role.rank(), ranks, hosts, store, token,
                role.host(), options);
        AbstractProcessGroup group = create(ctx);
        if (ownsStore) {
            group.alsoClose(store);
        }
        return group;
    }

    /**
     * Builds a group for {@code ctx} with the registered backend the options name, chosen by locality when they say
     * AUTO. Public for backends that compose groups of other backends (hierarchical), which live in their own package.
     */
    public static AbstractProcessGroup create(GroupContext ctx) {
        long uses = ctx.store().add(ctx.key("opened-by/" + ctx.rank()), 1);
        if (uses > 1) {
            throw new IllegalArgumentException("group name '" + ctx.name() + "' is already in use in job '" + ctx.jobId()
                    + "'; give each communicator its own name");
        }
        Backend backend = BackendChoice.of(ctx.options().backend(), ctx.locality()).backend();
        return Backends.host(backend).open(ctx);
    }
}
