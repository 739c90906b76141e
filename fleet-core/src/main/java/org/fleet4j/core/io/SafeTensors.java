package org.fleet4j.core.io;

import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.text.Quoted;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checkpoints in the safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian header
 * length, a JSON header padded with spaces to a multiple of 8 bytes, then every tensor's raw little-endian bytes,
 * back to back. Files written here load in Python with {@code safetensors.torch.load_file} or numpy, and back.
 */
public final class SafeTensors {
    /** Largest slice moved per call, below the 2 GiB limit of a ByteBuffer. */
    private static final long IO_CHUNK = 1L << 30;

    private SafeTensors() {
    }

    /**
     * Writes {@code tensors} (in map order) and {@code metadata} to {@code file} atomically: the bytes go to a
     * temporary file in the same directory, which is flushed to disk and renamed over {@code file}, and then the
     * directory is flushed. If anything fails the old file is untouched and the temporary file is removed; the
     * temporaries of an earlier write of {@code file} that was killed are removed first. The file's mode follows
     * the umask, as for any other new file.
     */
    public static void write(Path file, Map<String, Tensor> tensors, Map<String, String> metadata) {
        requireLittleEndian(file);
        Path target = writableTarget(file);
        List<Map.Entry<String, Tensor>> entries = new ArrayList<>(tensors.entrySet());
        SafeTensorsHeader header = headerFor(file, entries, metadata);
        byte[] json = header.encode();
        TemporaryFile.removeStale(target);
        TemporaryFile temp = null;
        String writing = null;
        CheckpointException failure = null;
        try {
            temp = TemporaryFile.create(target);
            FileChannel ch = temp.channel();
            ByteBuffer prefix = ByteBuffer.allocate(8 + json.length).order(ByteOrder.LITTLE_ENDIAN);
            prefix.putLong(json.length).put(json).flip();
            writeFully(ch, prefix);
            for (Map.Entry<String, Tensor> e : entries) {
                writing = e.getKey();
                writeSegment(ch, e.getValue().segment());
            }
            writing = null;
            temp.replace(target);
        } catch (IOException | RuntimeException e) {
            boolean renamed = temp != null && temp.renamed();
            String problem = renamed
                    ? "was written, but flushing its directory failed (" + e + "); a crash now may lose the new file"
                    : (writing == null ? "cannot be written" : writing + " could not be written")
                    + " (" + e + "); the previous file, if any, is unchanged";
            failure = new CheckpointException(file, writing, problem, e);
            throw failure;
        } finally {
            if (temp != null && !temp.renamed()) {
                temp.delete(failure);
            }
        }
    }

    /**
     * Checks that {@link #write} could write {@code file} now: its directory exists and takes new files, and the file
     * is not a directory or another special file. Creates and removes a temporary file there, leaving nothing
     * behind; a program calls this before its work, so a bad path fails at once instead of after it.
     */
    public static void checkWritable(Path file) {
        Path target = writableTarget(file);
        try {
            TemporaryFile.create(target).delete(null);
        } catch (AccessDeniedException e) {
            throw new CheckpointException(file, null, "directory " + target.getParent() + " does not let this user create"
                    + " files (permission denied); choose a writable directory", e);
        } catch (IOException e) {
            throw new CheckpointException(file, null, "cannot create a file in directory " + target.getParent() + " ("
                    + e + "); choose a writable directory", e);
        }
    }

    /** The absolute target of a write of {@code file}, after the checks that need no file to be created. */
    private static Path writableTarget(Path file) {
        Path target = file.toAbsolutePath();
        Path dir = target.getParent();
        if (dir == null || !Files.exists(dir)) {
            throw new CheckpointException(file, null, "directory " + dir + " does not exist; create it first");
        }
        if (!Files.isDirectory(dir)) {
            throw new CheckpointException(file, null, dir + " is not a directory");
        }
        if (Files.isDirectory(target)) {
            throw new CheckpointException(file, null, "is a directory; name a file in it, e.g. "
                    + target.resolve("checkpoint.safetensors"));
        }
        if (Files.exists(target) && !Files.isRegularFile(target)) {
            throw new CheckpointException(file, null, "exists and is not a regular file; name another file");
        }
        return target;
    }

    private static SafeTensorsHeader headerFor(Path file, List<Map.Entry<String, Tensor>> entries, Map<String, String> metadata) {
        List<SafeTensorsHeader.Entry> out = new ArrayList<>();
        long offset = 0;
        for (Map.Entry<String, Tensor> e : entries) {
            String name = e.getKey();
            Tensor t = e.getValue();
            if (name == null || name.isEmpty() || name.equals(SafeTensorsHeader.METADATA_KEY)) {
                throw new CheckpointException(file, name, "'" + name + "' cannot name a tensor in a safetensors file");
            }
            if (t == null) {
                throw new CheckpointException(file, name, name + " has no tensor (null)");
            }
            out.add(new SafeTensorsHeader.Entry(name, t.dtype(), t.shape(), offset, offset + t.byteSize()));
            offset += t.byteSize();
        }
        Map<String, String> meta = new LinkedHashMap<>();
        metadata.forEach((k, v) -> {
            if (k == null || v == null) {
                throw new CheckpointException(file, null, "metadata entry " + k + "=" + v + " is null; metadata maps strings to strings");
            }
            meta.put(k, v);
        });
        return new SafeTensorsHeader(out, meta);
    }

    /** All tensors of {@code file}, in the order of its header. */
    public static Map<String, Tensor> read(Path file) {
        return readCheckpoint(file).tensors();
    }

    /** All tensors of {@code file}, in the order of its header, with its metadata. */
    public static Checkpoint readCheckpoint(Path file) {
        requireLittleEndian(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            SafeTensorsHeader header = readHeader(file, ch, size);
            long dataStart = size - dataBytes(header);
            Map<String, Tensor> tensors = new LinkedHashMap<>();
            for (SafeTensorsHeader.Entry e : header.entries()) {
                Tensor t;
                try {
                    t = Tensor.zeros(e.dtype(), e.shape());
                } catch (OffHeapMemoryException m) {
                    throw m.in("checkpoint " + file + ", tensor " + e.name());
                }
                if (e.stored().widens()) {
                    readWidened(file, e, ch, t, dataStart + e.begin());
                } else {
                    readSegment(file, e.name(), ch, t.segment(), dataStart + e.begin());
                }
                tensors.put(e.name(), t);
            }
            return new Checkpoint(tensors, header.metadata());
        } catch (NoSuchFileException e) {
            throw new CheckpointException(file, null, "file does not exist", e);
        } catch (IOException e) {
            throw new CheckpointException(file, null, "cannot be read: " + e, e);
        }
    }

    /** Reads an F16 or U8 tensor's bytes and widens each element exactly into {@code t} (F32 or I32). */
    private static void readWidened(Path file, SafeTensorsHeader.Entry e, FileChannel ch, Tensor t, long position) throws IOException {
        long n = t.numel();
        long chunk = IO_CHUNK / e.stored().byteSize();
        for (long from = 0; from < n; from += chunk) {
            int count = (int) Math.min(chunk, n - from);
            ByteBuffer raw = ByteBuffer.allocate(count * e.stored().byteSize()).order(ByteOrder.LITTLE_ENDIAN);
            readFully(file, e.name(), ch, raw, position + from * e.stored().byteSize());
            raw.flip();
            for (int i = 0; i < count; i++) {
                if (e.stored() == StoredDType.F16) {
                    t.setFloat(from + i, Float.float16ToFloat(raw.getShort()));
                } else {
                    t.setLong(from + i, raw.get() & 0xff);
                }
            }
        }
    }

    private static long dataBytes(SafeTensorsHeader header) {
        return header.entries().stream().mapToLong(SafeTensorsHeader.Entry::byteSize).sum();
    }

    private static SafeTensorsHeader readHeader(Path file, FileChannel ch, long size) throws IOException {
        if (size < 8) {
            throw new CheckpointException(file, null, "file has " + size + " bytes, fewer than the 8-byte header length");
        }
        ByteBuffer lengthBytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        readFully(file, null, ch, lengthBytes, 0);
        long headerLength = lengthBytes.flip().getLong();
        if (headerLength < 2 || headerLength > SafeTensorsHeader.MAX_HEADER_BYTES || headerLength > size - 8) {
            throw new CheckpointException(file, null, "header length " + headerLength + " (the first 8 bytes, little-endian)"
                    + " is impossible for a file of " + size + " bytes; this is not a safetensors file or it is truncated");
        }
        ByteBuffer json = ByteBuffer.allocate((int) headerLength);
        readFully(file, null, ch, json, 8);
        return SafeTensorsHeader.parse(file, json.array(), size - 8 - headerLength);
    }

    /**
     * Fills {@code targets} from {@code file}, all or nothing: every target's presence, dtype and shape is checked
     * against the file, and the file is read and validated whole, before any target is written. Strict loading also
     * fails when the file lacks a target or holds a variable no target names; otherwise those are reported. A
     * value that is NaN or infinite fails the load.
     */
    public static LoadReport loadInto(Path file, Map<String, Tensor> targets, boolean strict) {
        return loadInto(file, targets, strict ? LoadOptions.STRICT : LoadOptions.LENIENT);
    }

    /** As {@link #loadInto(Path, Map, boolean)}, with {@code options} deciding what is refused. */
    public static LoadReport loadInto(Path file, Map<String, Tensor> targets, LoadOptions options) {
        boolean strict = options.strict();
        Checkpoint checkpoint = readCheckpoint(file);
        Map<String, Tensor> found = checkpoint.tensors();
        List<String> loaded = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String firstVariable = null;
        for (Map.Entry<String, Tensor> e : targets.entrySet()) {
            String name = e.getKey();
            Tensor want = e.getValue();
            Tensor have = found.get(name);
            String problem = null;
            if (have == null) {
                missing.add(name);
                if (strict) {
                    problem = name + " is missing; the checkpoint holds " + summary(found.keySet());
                }
            } else if (have.dtype() != want.dtype()) {
                problem = name + " has dtype " + have.dtype().displayName() + ", the program expects " + want.dtype().displayName();
            } else if (!want.hasShape(have.shape())) {
                problem = name + " has shape " + Shapes.str(have.shape()) + ", the program expects " + Shapes.str(want.shape());
            } else {
                problem = options.allowNonFinite() ? null : nonFinite(name, have);
                if (problem == null) {
                    loaded.add(name);
                }
            }
            if (problem != null) {
                problems.add(problem);
                firstVariable = firstVariable == null ? name : firstVariable;
            }
        }
        List<String> unexpected = found.keySet().stream().filter(n -> !targets.containsKey(n)).toList();
        if (strict && !unexpected.isEmpty()) {
            problems.add("holds variables the program does not have: " + summary(unexpected));
            firstVariable = firstVariable == null ? unexpected.getFirst() : firstVariable;
        }
        if (problems.size() == 1) {
            throw new CheckpointException(file, firstVariable, problems.getFirst() + "; nothing was loaded");
        }
        if (!problems.isEmpty()) {
            throw new CheckpointException(file, firstVariable, problems.size() + " problems, nothing was loaded:\n  "
                    + String.join("\n  ", problems));
        }
        for (String name : loaded) {
            targets.get(name).copyFrom(found.get(name));
        }
        return new LoadReport(loaded, missing, unexpected);
    }

    /** Why {@code t} cannot be loaded as {@code name} because of a NaN or an infinity, or null when all is finite. */
    static String nonFinite(String name, Tensor t) {
        long bad = t.firstNonFinite();
        return bad < 0 ? null : name + " holds " + t.getDouble(bad) + " at " + t.indexOf(bad) + " (flat index " + bad
                + "), so the training that saved it had diverged (a load allowing non-finite values reads it for inspection)";
    }

    static String summary(Collection<String> names) {
        List<String> list = names.stream().map(Quoted::bare).toList();
        if (list.isEmpty()) {
            return "no variables";
        }
        return list.size() <= 8 ? String.join(", ", list)
                : String.join(", ", list.subList(0, 8)) + " and " + (list.size() - 8) + " more";
    }

    private static void requireLittleEndian(Path file) {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new CheckpointException(file, null, "safetensors stores little-endian bytes; this big-endian platform is not supported");
        }
    }

    private static void writeSegment(FileChannel ch, MemorySegment segment) throws IOException {
        for (long pos = 0; pos < segment.byteSize(); pos += IO_CHUNK) {
            writeFully(ch, segment.asSlice(pos, Math.min(IO_CHUNK, segment.byteSize() - pos)).asByteBuffer());
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            ch.write(buffer);
        }
    }

    private static void readSegment(Path file, String name, FileChannel ch, MemorySegment segment, long position) throws IOException {
        for (long pos = 0; pos < segment.byteSize(); pos += IO_CHUNK) {
            readFully(file, name, ch, segment.asSlice(pos, Math.min(IO_CHUNK, segment.byteSize() - pos)).asByteBuffer(), position + pos);
        }
    }

    private static void readFully(Path file, String name, FileChannel ch, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int n = ch.read(buffer, at);
            if (n < 0) {
                throw new CheckpointException(file, name, (name == null ? "the header" : name) + " ends early at byte " + at
                        + "; the file shrank while it was read");
            }
            at += n;
        }
    }
}
