package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/** Small files (manifests) written like checkpoints: to a locked temporary in the same directory, then renamed. */
public final class AtomicFile {
    private AtomicFile() {
    }

    /** Replaces {@code file} with {@code bytes}; on failure the old file is untouched and the temporary removed. */
    public static void write(Path file, byte[] bytes) {
        Path target = file.toAbsolutePath();
        TemporaryFile.removeStale(target);
        TemporaryFile temp = null;
        CheckpointException failure = null;
        try {
            temp = TemporaryFile.create(target);
            FileChannel ch = temp.channel();
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            temp.replace(target);
        } catch (IOException | RuntimeException e) {
            boolean renamed = temp != null && temp.renamed();
            failure = new CheckpointException(file, null, (renamed ? "was written, but flushing its directory failed ("
                    : "cannot be written (") + e + ")" + (renamed ? "" : "; the previous file, if any, is unchanged"), e);
            throw failure;
        } finally {
            if (temp != null && !temp.renamed()) {
                temp.delete(failure);
            }
        }
    }
}
