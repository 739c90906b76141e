package org.fleet4j.fleet.role;

import org.fleet4j.cluster.Role;

/** A role given in code, for schedulers Fleet4J does not know (Paddle's UserDefinedRoleMaker). */
public record UserDefinedRoleMaker(Role role) implements RoleMaker {
    public UserDefinedRoleMaker {
        if (role == null) {
            throw new IllegalArgumentException("UserDefinedRoleMaker needs a role");
        }
    }

    /** Every rank on one host; rank 0 hosts the store at {@code master} (host:port). */
    public static UserDefinedRoleMaker oneHost(int rank, int worldSize, String master, String jobId) {
        return new UserDefinedRoleMaker(Role.trainer(rank, worldSize, rank, worldSize, 0, 1, master, "127.0.0.1", jobId,
                "user-defined role"));
    }
}
