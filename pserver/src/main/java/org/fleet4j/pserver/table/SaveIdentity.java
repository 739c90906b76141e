package org.fleet4j.pserver.table;

import java.util.UUID;

/**
 * Which save a shard belongs to: the job that made it, how far it had trained, and a random id that every shard of
 * one save shares. The trainer that asks the servers to save makes one and sends it to each; a load refuses a folder
 * whose shards do not all carry the same ({@link ShardManifests}).
 *
 * @param job the job's id ({@code FLEET_JOB_ID})
 * @param epoch epochs finished when saved, or {@link #UNKNOWN}
 * @param step training steps taken when saved, or {@link #UNKNOWN}
 * @param saveId random, one per save
 * @param incremental whether each server writes only the rows changed since its last save (a delta naming that
 *                    save as its parent), or every row
 */
public record SaveIdentity(String job, long epoch, long step, String saveId, boolean incremental) {
    /** The epoch or step of a save made without saying it ({@code fleet.savePersistables(dir)}). */
    public static final long UNKNOWN = -1;

    public SaveIdentity {
        if (job == null || saveId == null || saveId.isEmpty()) {
            throw new IllegalArgumentException("a save identity needs a job and a save id, got " + job + " and " + saveId);
        }
    }

    /** A full save. */
    public SaveIdentity(String job, long epoch, long step, String saveId) {
        this(job, epoch, step, saveId, false);
    }

    /** A new full save of {@code job} after {@code epoch} epochs and {@code step} steps, with a fresh random id. */
    public static SaveIdentity fresh(String job, long epoch, long step) {
        return new SaveIdentity(job, epoch, step, UUID.randomUUID().toString());
    }

    /** This save, asking every server for only what changed since its last save. */
    public SaveIdentity asIncremental() {
        return new SaveIdentity(job, epoch, step, saveId, true);
    }

}
