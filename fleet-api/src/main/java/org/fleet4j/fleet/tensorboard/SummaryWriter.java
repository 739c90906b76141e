package org.fleet4j.fleet.tensorboard;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.fleet4j.fleet.tensorboard.proto.EventProto.Event;
import org.fleet4j.fleet.tensorboard.proto.EventProto.Summary;

/**
 * Writes scalars to a TensorBoard event file, {@code DIR/events.out.tfevents.<seconds>.<host>} as TensorFlow names
 * them ({@code .<pid>.<n>} added when that name is taken), which {@code tensorboard --logdir DIR} shows as one run. The
 * first record is the file version ({@value #FILE_VERSION}); each {@link #addScalar} is one Event with one simple
 * value. Safe to call from several threads. Records are buffered and reach the file on {@link #flush}, on
 * {@link #close}, and every flush interval (TensorBoard rereads its files every few seconds).
 */
public final class SummaryWriter implements AutoCloseable {
    public static final String FILE_VERSION = "brain.Event:2";
    public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofSeconds(5);

    private final Path file;
    private final OutputStream out;
    private final long flushMillis;
    private boolean unflushed;
    private boolean closed;
    /** A failed periodic flush, reported by the next call, since the flushing thread has no caller to tell. */
    private IOException failure;

    private SummaryWriter(Path file, OutputStream out, Duration flushInterval) {
        this.file = file;
        this.out = out;
        this.flushMillis = Math.max(1, flushInterval.toMillis());
    }

    /** A new event file in {@code dir} (created if missing), flushed every {@link #DEFAULT_FLUSH_INTERVAL}. */
    public static SummaryWriter open(Path dir) throws IOException {
        return open(dir, DEFAULT_FLUSH_INTERVAL);
    }

    /** A new event file in {@code dir} (created if missing), flushed every {@code flushInterval}. */
    public static SummaryWriter open(Path dir, Duration flushInterval) throws IOException {
        Files.createDirectories(dir);
        String base = "events.out.tfevents." + System.currentTimeMillis() / 1000 + "." + hostName();
        Path file = dir.resolve(base);
        OutputStream stream = null;
        for (int n = 1; stream == null; n++) {
            try {
                stream = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            } catch (FileAlreadyExistsException taken) {
                // another writer of this second on this host: as TensorFlow 2 does, the pid and a count tell them apart
                file = dir.resolve(base + "." + ProcessHandle.current().pid() + "." + n);
            }
        }
        SummaryWriter writer = new SummaryWriter(file, new BufferedOutputStream(stream), flushInterval);
        try {
            writer.write(Event.newBuilder().setWallTime(now()).setFileVersion(FILE_VERSION).build());
            writer.flush();
        } catch (UncheckedIOException e) {
            stream.close();
            throw new IOException(e.getMessage(), e.getCause());
        }
        Thread.ofPlatform().daemon().name("tensorboard-flush " + file.getFileName()).start(writer::flushPeriodically);
        return writer;
    }

    /** The event file. */
    public Path file() {
        return file;
    }

    /** Records {@code value} (stored as a float32, as TensorBoard's scalars are) under {@code tag} at {@code step}. */
    public void addScalar(String tag, double value, long step) {
        addScalar(tag, value, step, now());
    }

    /** As {@link #addScalar(String, double, long)}, at {@code wallTime} seconds since the epoch. */
    public void addScalar(String tag, double value, long step, double wallTime) {
        if (tag == null || tag.isEmpty()) {
            throw new IllegalArgumentException("a TensorBoard scalar needs a tag (a name such as train/loss), got '" + tag + "'");
        }
        Summary.Value v = Summary.Value.newBuilder().setTag(tag).setSimpleValue((float) value).build();
        write(Event.newBuilder().setWallTime(wallTime).setStep(step).setSummary(Summary.newBuilder().addValue(v)).build());
    }

    /** Writes every record so far to the file. */
    public synchronized void flush() {
        checkOpen();
        try {
            out.flush();
            unflushed = false;
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** Flushes and closes the file; later calls to add or flush are refused. Closing twice does nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        notifyAll();
        try (out) {
            if (failure != null) {
                throw failed(failure);
            }
            out.flush();
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private synchronized void write(Event event) {
        checkOpen();
        try {
            out.write(TfRecords.frame(event.toByteArray()));
            unflushed = true;
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private synchronized void flushPeriodically() {
        while (!closed && failure == null) {
            try {
                wait(flushMillis);
            } catch (InterruptedException e) {
                return;
            }
            if (!closed && unflushed) {
                try {
                    out.flush();
                    unflushed = false;
                } catch (IOException e) {
                    failure = e;
                }
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the TensorBoard event file " + file + " is closed");
        }
        if (failure != null) {
            throw failed(failure);
        }
    }

    private UncheckedIOException failed(IOException e) {
        return new UncheckedIOException("cannot write the TensorBoard event file " + file + ": " + e.getMessage(), e);
    }

    private static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    /** The kernel's host name, as TensorFlow puts it in the file name; no name lookup, which can hang without DNS. */
    private static String hostName() {
        try {
            String name = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.US_ASCII).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException | RuntimeException notLinux) {
            // below
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
