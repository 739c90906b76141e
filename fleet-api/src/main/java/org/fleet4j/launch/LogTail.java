package org.fleet4j.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a rank's log, for the failure report. */
final class LogTail {
    /** Enough for 20 long lines (a stack trace) without reading a huge log whole. */
    private static final int MAX_BYTES = 64 * 1024;

    private LogTail() {
    }

    static List<String> lastLines(Path file, int count) {
        try (SeekableByteChannel channel = Files.newByteChannel(file)) {
            long size = channel.size();
            int length = (int) Math.min(size, MAX_BYTES);
            ByteBuffer buffer = ByteBuffer.allocate(length);
            channel.position(size - length);
            while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                // read until the buffer is full or the file ends
            }
            List<String> lines = new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8).lines().toList();
            if (length < size && !lines.isEmpty()) {
                lines = lines.subList(1, lines.size());  // the first line was cut in the middle
            }
            return lines.subList(Math.max(0, lines.size() - count), lines.size());
        } catch (IOException e) {
            return List.of("(cannot read " + file + ": " + e.getMessage() + ")");
        }
    }
}
