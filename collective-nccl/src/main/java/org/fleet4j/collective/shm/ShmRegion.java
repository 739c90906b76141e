package org.fleet4j.collective.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.group.GroupContext;

/**
 * One registered buffer of a shared-memory group: a file mapped by every rank that holds each rank's copy of the
 * buffer in rank order, {@code stride} bytes apart. A rank computes in its own part like in any buffer, and an
 * allreduce of it reads and writes the other ranks' parts directly instead of staging through the slots.
 *
 * @param id    position among the group's registrations (the same on every rank)
 * @param name  what the registering code called it, for error messages
 * @param bytes the size of each rank's part
 */
record ShmRegion(int id, String name, long bytes, long stride, MemorySegment whole, MemorySegment mine) {

    /** What a rank stores under its mapped key once it has mapped the file; a rank that cannot stores why. */
    private static final String MAPPED = "mapped";

    private static String mappedKey(GroupContext ctx, int id, int rank) {
        return ctx.key("shm/registered/" + id + "/mapped/" + rank);
    }

    /** Rank {@code r}'s part. */
    MemorySegment part(int r) {
        return whole.asSlice(r * stride, bytes);
    }

    /** The offset of {@code buffer} in this rank's part, or -1 when it does not lie entirely inside it. */
    long offsetOf(MemorySegment buffer) {
        long off = buffer.address() - mine.address();
        return off >= 0 && off + buffer.byteSize() <= bytes && !buffer.isReadOnly() ? off : -1;
    }

    /**
     * Maps registration number {@code id} on every rank of the group: rank 0 creates the file and publishes its path
     * with the name and size it registered, the others check that they registered the same, map it and say so, and
     * rank 0 unlinks it once all have. Every wait is bounded by the group's timeout.
     */
    static ShmRegion map(GroupContext ctx, int id, String name, long bytes, Arena arena) {
        int n = ctx.size();
        long stride = (bytes + 4095) & ~4095L;
        Duration timeout = ctx.options().timeout();
        String what = "registered buffer #" + id + " '" + name + "' (" + bytes + " bytes) on " + ctx;
        String pathKey = ctx.key("shm/registered/" + id);
        Path file = null;
        try {
            MemorySegment whole;
            if (ctx.rank() == 0) {
                file = ShmFiles.newFile(ShmFiles.directory(), ctx.jobId(), ctx.name() + "-registered" + id,
                        new SecureRandom().nextLong());
                try (FileChannel fc = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE)) {
                    whole = fc.map(FileChannel.MapMode.READ_WRITE, 0, stride * n, arena);
                }
                ctx.store().setString(pathKey, bytes + "\n" + name + "\n" + file);
            } else {
                String[] published = ctx.store().getString(pathKey, timeout).split("\n", 3);
                if (Long.parseLong(published[0]) != bytes || !published[1].equals(name)) {
                    String mismatch = "rank 0 registered '" + published[1] + "' of " + published[0] + " bytes as #" + id
                            + ", rank " + ctx.rank() + " '" + name + "' of " + bytes
                            + " bytes; every rank must register the same buffers in the same order";
                    ctx.store().setString(mappedKey(ctx, id, ctx.rank()), mismatch);
                    throw new CollectiveException(what + ": " + mismatch);
                }
                file = Path.of(published[2]);
                try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    if (fc.size() != stride * n) {
                        throw new CollectiveException(what + ": file " + file + " holds " + fc.size() + " bytes, expected "
                                + stride * n + " (another job's file?)");
                    }
                    whole = fc.map(FileChannel.MapMode.READ_WRITE, 0, stride * n, arena);
                }
            }
            ctx.store().setString(mappedKey(ctx, id, ctx.rank()), MAPPED);
            if (ctx.rank() == 0) {
                List<String> keys = new ArrayList<>();
                for (int r = 1; r < n; r++) {
                    keys.add(mappedKey(ctx, id, r));
                }
                try {
                    ctx.store().waitFor(keys, timeout);
                } finally {
                    Files.deleteIfExists(file);
                }
                for (int r = 1; r < n; r++) {
                    String answer = ctx.store().getString(mappedKey(ctx, id, r), timeout);
                    if (!answer.equals(MAPPED)) {
                        throw new CollectiveException(what + ": rank " + r + " could not take part: " + answer);
                    }
                }
            }
            return new ShmRegion(id, name, bytes, stride, whole, whole.asSlice(ctx.rank() * stride, bytes));
        } catch (NoSuchFileException e) {
            throw new CollectiveException(what + ": shared-memory file " + e.getFile() + " is gone: are all ranks of"
                    + " this group really on one host (same /dev/shm)?", e);
        } catch (IOException e) {
            throw new CollectiveException(what + ": cannot map shared memory " + (file == null ? ShmFiles.directory() : file)
                    + ": " + e, e);
        } catch (RuntimeException e) {
            if (e instanceof CollectiveException) {
                throw e;
            }
            throw new CollectiveException(what + ": " + e.getMessage(), e);
        }
    }
}
