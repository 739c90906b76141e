package org.fleet4j.collective.nccl;

import java.time.Duration;
import java.util.function.Supplier;
import org.fleet4j.cluster.Store;
import org.fleet4j.collective.CollectiveException;

/** Hands rank 0's NCCL unique id to the other ranks of a communicator through the rendezvous store. */
final class NcclIdExchange {
    static final int ID_BYTES = 128;

    private NcclIdExchange() {
    }

    static String key(String group) {
        return "nccl/" + group + "/unique-id";
    }

    /** Rank 0 creates and publishes the id; the others wait up to {@code timeout} for it. */
    static byte[] share(Store store, String group, int rank, Supplier<byte[]> create, Duration timeout) {
        String key = key(group);
        if (rank == 0) {
            byte[] id = create.get();
            checkLength(id, group, key);
            store.set(key, id);
            return id;
        }
        byte[] id;
        try {
            id = store.get(key, timeout);
        } catch (CollectiveException e) {
            throw new CollectiveException("rank " + rank + " waited " + timeout.toMillis() + " ms for the NCCL unique id of"
                    + " group '" + group + "' from rank 0 (store key '" + key + "'); is rank 0 alive and on a GPU? "
                    + e.getMessage(), e);
        }
        checkLength(id, group, key);
        return id;
    }

    private static void checkLength(byte[] id, String group, String key) {
        if (id.length != ID_BYTES) {
            throw new CollectiveException("the NCCL unique id of group '" + group + "' (store key '" + key + "') has "
                    + id.length + " bytes, expected " + ID_BYTES + "; do all ranks run the same Fleet4J and NCCL?");
        }
    }
}
