package org.fleet4j.collective.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Names and housekeeping of the files that back shared-memory groups. A file is named
 * {@code fleet4j-<creator pid>-<job>-<group>-<nonce>}; the creator unlinks it as soon as every rank has mapped it,
 * so a file is left behind only if its creator dies during those milliseconds. Such stale files are removed by the
 * next job that starts on the host: their creator pid no longer runs.
 */
public final class ShmFiles {
    private static final System.Logger LOG = System.getLogger(ShmFiles.class.getName());
    static final String PREFIX = "fleet4j-";

    private ShmFiles() {
    }

    /** /dev/shm where the OS has it (memory-backed), else the temp directory; FLEET_SHM_DIR overrides. */
    public static Path directory() {
        String override = System.getenv("FLEET_SHM_DIR");
        if (override != null && !override.isBlank()) {
            return Path.of(override);
        }
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    static Path newFile(Path dir, String jobId, String group, long nonce) {
        return dir.resolve(PREFIX + ProcessHandle.current().pid() + "-" + safe(jobId) + "-" + safe(group) + "-"
                + Long.toHexString(nonce));
    }

    private static String safe(String s) {
        return s.replaceAll("[^A-Za-z0-9_.]", "_");
    }

    /** The creator pid in a segment file's name, if it is one of ours. */
    static Optional<Long> creatorPid(Path file) {
        String name = file.getFileName().toString();
        if (!name.startsWith(PREFIX)) {
            return Optional.empty();
        }
        int end = name.indexOf('-', PREFIX.length());
        if (end < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(name.substring(PREFIX.length(), end)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Deletes segment files in {@code dir} whose creator process no longer runs; returns what it deleted. */
    public static List<Path> removeStale(Path dir) {
        List<Path> removed = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*")) {
            for (Path f : files) {
                Optional<Long> pid = creatorPid(f);
                if (pid.isEmpty() || ProcessHandle.of(pid.get()).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                try {
                    if (Files.deleteIfExists(f)) {
                        removed.add(f);
                        LOG.log(System.Logger.Level.INFO, "removed stale shared-memory segment " + f
                                + " left by process " + pid.get() + ", which no longer runs");
                    }
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.WARNING, "cannot remove stale shared-memory segment " + f + ": " + e);
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot scan " + dir + " for stale shared-memory segments: " + e);
        }
        return removed;
    }
}
