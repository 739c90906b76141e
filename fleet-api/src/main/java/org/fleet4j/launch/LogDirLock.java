package org.fleet4j.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A job's hold on its log folder, so that two jobs never write into each other's logs: {@value #FILE} in the folder
 * names the job, its launcher's pid and since when, and the launcher holds an OS lock on it while the job runs
 * ({@link FileChannel#tryLock}). A second job on the folder is refused up front, naming the holder. The OS drops the
 * lock when the launcher ends, however it ends (SIGKILL included), so a lock file that a dead launcher left is taken
 * over; the file itself stays, naming the folder's last job.
 */
final class LogDirLock implements AutoCloseable {
    static final String FILE = ".fleetrun.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private LogDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Creates {@code dir} if needed and takes it for job {@code jobId}. */
    static LogDirLock acquire(Path dir, String jobId) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new LaunchException("--log_dir " + dir + ": cannot create it: " + reason(e), e);
        }
        FileChannel channel;
        try {
            channel = FileChannel.open(dir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new LaunchException("--log_dir " + dir + ": cannot write in it: " + reason(e), e);
        }
        try {
            FileLock lock = tryLock(channel);
            if (lock == null) {
                String holder = holder(channel);
                channel.close();
                throw new LaunchException("--log_dir " + dir + " is in use by " + holder + "; pass another --log_dir, or"
                        + " wait for that job to end");
            }
            byte[] text = ("job " + jobId + "\npid " + ProcessHandle.current().pid() + "\nsince "
                    + Instant.now().truncatedTo(ChronoUnit.SECONDS) + "\n").getBytes(StandardCharsets.UTF_8);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(text), 0);
            channel.force(false);
            return new LogDirLock(channel, lock);
        } catch (IOException e) {
            close(channel);
            throw new LaunchException("--log_dir " + dir + ": cannot lock " + FILE + " in it: " + reason(e), e);
        }
    }

    /** Null when another process holds the lock, or this JVM does (a second job started from one JVM). */
    private static FileLock tryLock(FileChannel channel) throws IOException {
        try {
            return channel.tryLock();
        } catch (OverlappingFileLockException heldHere) {
            return null;
        }
    }

    /** "job first (launcher pid 123, since 2026-...Z)" from the holder's lock file. */
    private static String holder(FileChannel channel) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        channel.read(buffer, 0);
        String job = null;
        String pid = null;
        String since = null;
        for (String line : new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("job ")) {
                job = line.substring(4);
            } else if (line.startsWith("pid ")) {
                pid = line.substring(4);
            } else if (line.startsWith("since ")) {
                since = line.substring(6);
            }
        }
        if (job == null || pid == null || since == null) {
            return "another job, which is just starting";
        }
        return "job " + job + " (launcher pid " + pid + ", since " + since + ")";
    }

    /** What went wrong, without the exception's class name: "No such file or directory". */
    private static String reason(IOException e) {
        return switch (e) {
            case NoSuchFileException missing -> "No such file or directory";
            case AccessDeniedException denied -> "Permission denied";
            case NotDirectoryException notDir -> "Not a directory";
            case FileAlreadyExistsException exists -> exists.getFile() + " exists and is not a directory";
            case FileSystemException fs when fs.getReason() != null -> fs.getReason();
            default -> e.getMessage();
        };
    }

    private static void close(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing also drops the lock; nothing more to do
        }
    }

    /** Gives the folder up: the next job may take it. */
    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException e) {
            // closing the channel below drops it as well
        }
        close(channel);
    }
}
