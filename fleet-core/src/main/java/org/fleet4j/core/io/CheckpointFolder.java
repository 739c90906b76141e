package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A folder a checkpoint of many files is saved into (the parameter servers' shards, a progress file), checked before
 * training as {@link SafeTensors#checkWritable} checks a file: the folder may be new, but the folder it goes in must
 * exist (a mistyped path fails at once rather than being made), and a new file must be possible there.
 */
public final class CheckpointFolder {
    private CheckpointFolder() {
    }

    /**
     * Checks that files (and sub-folders) can be written into {@code dir} now: it is a folder that takes new files,
     * or it does not exist yet and its parent is one. Creates and removes a temporary file, leaving nothing behind.
     */
    public static void checkWritable(Path dir) {
        Path target = dir.toAbsolutePath();
        Path probed = target;
        if (!Files.isDirectory(target)) {
            if (Files.exists(target)) {
                throw new CheckpointException(dir, null, "exists and is not a directory; name a folder");
            }
            probed = target.getParent();
            if (probed == null || !Files.exists(probed)) {
                throw new CheckpointException(dir, null, "directory " + probed + " does not exist; create it first");
            }
            if (!Files.isDirectory(probed)) {
                throw new CheckpointException(dir, null, probed + " is not a directory");
            }
        }
        try {
            TemporaryFile.create(probed.resolve(".fleet4j-write-check")).delete(null);
        } catch (AccessDeniedException e) {
            throw new CheckpointException(dir, null, "directory " + probed + " does not let this user create files"
                    + " (permission denied); choose a writable directory", e);
        } catch (IOException e) {
            throw new CheckpointException(dir, null, "cannot create a file in directory " + probed + " (" + e
                    + "); choose a writable directory", e);
        }
    }
}
