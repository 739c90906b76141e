package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Small files (manifests) written like checkpoints: to a locked temporary in the same directory, then renamed. */
public final class AtomicFile {
    private AtomicFile() {
    }

    /** Replaces {@code file} with {@code bytes}; on failure the old file is untouched and the temporary removed. */
    public static void write(Path file, byte[] bytes) {
        Path target = file.toAbsolutePath();
        TemporaryFile.removeStale(target);
        TemporaryFile temp = null;
        boolean renamed = false;
        CheckpointException failure = null;
        try {
            temp = TemporaryFile.create(target);
            FileChannel ch = temp.channel();
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
            Files.move(temp.path(), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            renamed = true;
            temp.close();
            try (FileChannel d = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
                d.force(true);
            }
        } catch (IOException | RuntimeException e) {
            failure = new CheckpointException(file, null, (renamed ? "was written, but flushing its directory failed ("
                    : "cannot be written (") + e + ")" + (renamed ? "" : "; the previous file, if any, is unchanged"), e);
            throw failure;
        } finally {
            if (!renamed && temp != null) {
                temp.delete(failure);
            }
        }
    }
}
