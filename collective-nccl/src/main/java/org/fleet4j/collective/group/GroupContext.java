package org.fleet4j.collective.group;

import java.util.Arrays;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Store;
import org.fleet4j.collective.GroupOptions;

/**
 * Everything a backend needs to build one group: its name (unique within the job), this process's rank in it,
 * the job-wide ranks of its members, their host keys (equal keys = same machine), the store, the job token
 * that every data connection must prove, and the address to listen on for TCP.
 */
public record GroupContext(String jobId, String name, int rank, int[] globalRanks, String[] hostKeys, Store store,
                           JobToken jobToken, String bindHost, GroupOptions options) {

    public int size() {
        return globalRanks.length;
    }

    /** Store keys of this group live under this prefix so that groups never see each other's keys. */
    public String key(String suffix) {
        return "g/" + name + "/" + suffix;
    }

    public boolean allOnOneHost() {
        return locality().allOnOneHost();
    }

    public Locality locality() {
        return Locality.of(hostKeys);
    }

    @Override
    public String toString() {
        return "group '" + name + "' (rank " + rank + " of " + size() + ")";
    }
}
