package org.fleet4j.core.data;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Streams {@link CriteoRow}s from Criteo-format files, plain or gzipped (told by the gzip magic bytes, not the
 * name), one line at a time, so a file of any size is read in constant memory.
 * <p>
 * Worker {@code w} of {@code n} reads its share: with at least {@code n} files, whole files (file {@code k} goes
 * to worker {@code k % n}), so no worker decompresses another's data; with fewer files than workers, every worker
 * reads every file and keeps the lines whose index, counted over all files in order, is {@code w} modulo {@code n}.
 * Either way each line goes to exactly one worker. A malformed line stops the reader with a
 * {@link DataFormatException} naming the file and line number, or, when bad lines are skipped, is counted.
 */
public final class CriteoReader implements AutoCloseable {
    /** How the lines of a set of files are divided between workers. */
    public enum Sharding {
        /** whole files per worker: at least as many files as workers */
        BY_FILE,
        /** every line {@code w} modulo {@code n}: fewer files than workers */
        BY_LINE
    }

    private static final int BUFFER = 1 << 16;

    private final List<Path> files;
    private final Sharding sharding;
    private final int worker;
    private final int workers;
    private final boolean skipBadLines;
    private int fileIndex = -1;
    private Path file;
    private BufferedReader in;
    private long lineInFile;
    private long lineOverall;
    private long rows;
    private long skipped;
    private String firstSkipped;

    private CriteoReader(List<Path> files, Sharding sharding, int worker, int workers, boolean skipBadLines) {
        this.files = files;
        this.sharding = sharding;
        this.worker = worker;
        this.workers = workers;
        this.skipBadLines = skipBadLines;
    }

    /** The whole of {@code files}, in order. */
    public static CriteoReader open(List<Path> files, boolean skipBadLines) {
        return open(files, 0, 1, skipBadLines);
    }

    /** Worker {@code worker}'s share of {@code files} among {@code workers} (see the class comment). */
    public static CriteoReader open(List<Path> files, int worker, int workers, boolean skipBadLines) {
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no Criteo files to read");
        }
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker " + worker + " of " + workers + " is not a worker index in [0, "
                    + workers + ")");
        }
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw new DataFormatException(f, Files.exists(f) ? "is not a regular file; expected a Criteo data file"
                        : "Criteo data file does not exist");
            }
        }
        Sharding sharding = sharding(files.size(), workers);
        List<Path> mine = files;
        if (sharding == Sharding.BY_FILE) {
            mine = new ArrayList<>();
            for (int k = worker; k < files.size(); k += workers) {
                mine.add(files.get(k));
            }
        }
        return new CriteoReader(List.copyOf(mine), sharding, worker, workers, skipBadLines);
    }

    public static Sharding sharding(int files, int workers) {
        return files >= workers ? Sharding.BY_FILE : Sharding.BY_LINE;
    }

    /** The files this worker opens, in reading order. */
    public List<Path> files() {
        return files;
    }

    public Sharding sharding() {
        return sharding;
    }

    /**
     * Fills {@code row} with this worker's next line.
     *
     * @return false when this worker's share is exhausted
     * @throws DataFormatException naming the file and line of a malformed line (unless bad lines are skipped), or a
     *                             file that cannot be read
     */
    public boolean next(CriteoRow row) {
        try {
            while (true) {
                if (in == null && !openNext()) {
                    return false;
                }
                String line = in.readLine();
                if (line == null) {
                    closeFile();
                    continue;
                }
                lineInFile++;
                boolean ours = sharding == Sharding.BY_FILE || lineOverall % workers == worker;
                lineOverall++;
                if (!ours) {
                    continue;
                }
                String problem = line.isEmpty() ? "is empty" : row.parse(line);
                if (problem == null) {
                    rows++;
                    return true;
                }
                String where = "line " + lineInFile + " " + problem;
                if (!skipBadLines) {
                    throw new DataFormatException(file, where + "; fix or remove the line, or pass --skip_bad_lines");
                }
                if (skipped++ == 0) {
                    firstSkipped = file + ": " + where;
                }
            }
        } catch (EOFException | ZipException e) {
            throw new DataFormatException(file, "gzip stream is truncated or corrupt after line " + lineInFile
                    + " (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            throw new DataFormatException(file, "cannot be read after line " + lineInFile + ": " + e, e);
        }
    }

    private boolean openNext() throws IOException {
        if (fileIndex + 1 >= files.size()) {
            return false;
        }
        file = files.get(++fileIndex);
        lineInFile = 0;
        InputStream raw = new BufferedInputStream(Files.newInputStream(file), BUFFER);
        try {
            raw.mark(2);
            boolean gzip = raw.read() == 0x1f && raw.read() == 0x8b;
            raw.reset();
            InputStream data = gzip ? new GZIPInputStream(raw, BUFFER) : raw;
            // Latin-1 maps every byte to one char: a stray non-ASCII byte is reported by the parser, not the decoder
            in = new BufferedReader(new InputStreamReader(data, StandardCharsets.ISO_8859_1), BUFFER);
        } catch (IOException e) {
            raw.close();
            throw e;
        }
        return true;
    }

    private void closeFile() throws IOException {
        BufferedReader r = in;
        in = null;
        r.close();
    }

    /** Rows returned so far. */
    public long rows() {
        return rows;
    }

    /** Malformed lines of this worker's share skipped so far (only when bad lines are skipped). */
    public long skippedLines() {
        return skipped;
    }

    /** "file: line N problem" of the first skipped line, or null when none was skipped. */
    public String firstSkipped() {
        return firstSkipped;
    }

    @Override
    public void close() {
        if (in != null) {
            try {
                closeFile();
            } catch (IOException e) {
                throw new DataFormatException(file, "cannot be closed: " + e, e);
            }
        }
    }
}
