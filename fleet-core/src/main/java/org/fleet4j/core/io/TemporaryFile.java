package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The temporary file {@code .NAME.N.tmp} that a write of {@code NAME} goes through before it is renamed over it. It is
 * created like any other file (its mode follows the umask) and locked while it is open, so that a later write of the
 * same target can tell the leftovers of a writer that died (unlocked) from a write in progress (locked) and remove
 * only the former.
 */
final class TemporaryFile implements AutoCloseable {
    /**
     * The temporaries this JVM has open. Closing any channel of a file drops every POSIX lock this process holds on
     * it, so {@link #removeStale} must not even open these to try their locks.
     */
    private static final Set<Path> OPEN = ConcurrentHashMap.newKeySet();

    private final Path path;
    private boolean renamed;
    private final FileChannel channel;

    private TemporaryFile(Path path, FileChannel channel) {
        this.path = path;
        this.channel = channel;
    }

    /** A new, empty, locked temporary for {@code target} in its directory. */
    static TemporaryFile create(Path target) throws IOException {
        while (true) {
            Path path = target.resolveSibling("." + target.getFileName() + "."
                    + (ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE) + ".tmp");
            FileChannel channel;
            try {
                channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (FileAlreadyExistsException e) {
                continue;
            }
            OPEN.add(path);
            TemporaryFile temp = new TemporaryFile(path, channel);
            try {
                channel.lock();
            } catch (IOException | RuntimeException e) {
                temp.delete(e);
                throw e;
            }
            return temp;
        }
    }

    /**
     * Removes the temporaries of {@code target} that no writer holds: those of a writer that was killed. Best effort:
     * a file that cannot be opened, locked or removed stays.
     */
    static void removeStale(Path target) {
        Pattern mine = Pattern.compile(Pattern.quote("." + target.getFileName() + ".") + "\\d+\\.tmp");
        try (DirectoryStream<Path> files = Files.newDirectoryStream(target.getParent(),
                f -> mine.matcher(f.getFileName().toString()).matches())) {
            for (Path file : files) {
                if (!OPEN.contains(file)) {
                    removeIfUnlocked(file);
                }
            }
        } catch (IOException e) {
            // the directory cannot be listed: the write itself will say what is wrong
        }
    }

    private static void removeIfUnlocked(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            FileLock lock = ch.tryLock();
            if (lock != null) {
                Files.deleteIfExists(file);
            }
        } catch (IOException | OverlappingFileLockException e) {
            // held by a writer, or gone already
        }
    }

    Path path() {
        return path;
    }

    /**
     * Makes the written file {@code target}: flushes it, renames it over the target while still locked (so no other
     * writer takes it for a dead writer's leftover), releases it, and flushes the directory, since the rename is
     * durable only once the directory entry is on disk. {@link #renamed()} tells a failure before the rename (the old
     * file is unchanged) from one after it.
     */
    void replace(Path target) throws IOException {
        channel.force(true);
        Files.move(path, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        renamed = true;
        close();
        try (FileChannel d = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    /** Whether {@link #replace} got as far as the rename. */
    boolean renamed() {
        return renamed;
    }

    FileChannel channel() {
        return channel;
    }

    /** Closes and removes the file; a failure to remove it is added to {@code failure} when there is one. */
    void delete(Throwable failure) {
        try {
            close();
            Files.deleteIfExists(path);
        } catch (IOException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            }
        }
    }

    /** Closes the file (releasing its lock); after a rename, the file is the target. */
    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            OPEN.remove(path);
        }
    }
}
