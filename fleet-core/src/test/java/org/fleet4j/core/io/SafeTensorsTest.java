package org.fleet4j.core.io;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SafeTensorsTest {
    @TempDir
    Path dir;

    private static Tensor ramp(DType dtype, long... shape) {
        Tensor t = Tensor.zeros(dtype, shape);
        for (long i = 0; i < t.numel(); i++) {
            t.setDouble(i, (i % 2 == 0 ? 1 : -1) * (i * 1.25 + 0.5));
        }
        return t;
    }

    private static Map<String, Tensor> everyDtype() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("fc_0.w_0", ramp(DType.F32, 3, 4));
        m.put("fc_0.b_0", ramp(DType.F64, 4));
        m.put("step", Tensor.ofLongs(new long[]{Long.MIN_VALUE, -1, Long.MAX_VALUE}));
        m.put("ids", Tensor.ofInts(new int[]{Integer.MIN_VALUE, 0, 7, Integer.MAX_VALUE, -3, 5}, 2, 3));
        m.put("emb", ramp(DType.BF16, 5));
        m.put("scalar", Tensor.scalar(2.5f));
        m.put("empty", Tensor.zeros(DType.F32, 0, 3));
        return m;
    }

    private static void assertSameTensors(Map<String, Tensor> expected, Map<String, Tensor> actual) {
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(actual.keySet()));
        for (String name : expected.keySet()) {
            Tensor e = expected.get(name);
            Tensor a = actual.get(name);
            assertEquals(e.dtype(), a.dtype(), name);
            assertArrayEquals(e.shape(), a.shape(), name);
            assertArrayEquals(e.segment().toArray(ValueLayout.JAVA_BYTE),
                    a.segment().toArray(ValueLayout.JAVA_BYTE), name);
        }
    }

    @Test
    void roundTripsEveryDtypeWithMetadata() {
        Path file = dir.resolve("model.safetensors");
        Map<String, Tensor> tensors = everyDtype();
        SafeTensors.write(file, tensors, Map.of("format", "fleet4j", "step", "120"));
        Checkpoint read = SafeTensors.readCheckpoint(file);
        assertSameTensors(tensors, read.tensors());
        assertEquals(Map.of("format", "fleet4j", "step", "120"), read.metadata());
        assertEquals(-1.75f, read.tensors().get("fc_0.w_0").getFloat(1));
        assertEquals(Long.MIN_VALUE, read.tensors().get("step").getLong(0));
    }

    @Test
    void bytesFollowTheSafetensorsSpecification() throws IOException {
        Path file = dir.resolve("spec.safetensors");
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        tensors.put("a", Tensor.of(new float[]{1, 2, 3, 4, 5, 6}, 2, 3));
        tensors.put("b", Tensor.ofLongs(new long[]{-2}, 1));
        SafeTensors.write(file, tensors, Map.of("format", "pt"));
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long headerLength = buf.getLong();
        assertEquals(0, headerLength % 8, "data section is 8-byte aligned");
        assertEquals(8 + headerLength + 24 + 8, bytes.length);
        String header = new String(bytes, 8, (int) headerLength, StandardCharsets.UTF_8);
        String json = "{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                + "\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[24,32]}}";
        assertEquals(json + " ".repeat((int) headerLength - json.length()), header);
        JsonNode parsed = new ObjectMapper().readTree(header);
        assertEquals("I64", parsed.get("b").get("dtype").asText());
        buf.position((int) (8 + headerLength));
        for (int i = 1; i <= 6; i++) {
            assertEquals(i, buf.getFloat());
        }
        assertEquals(-2L, buf.getLong());
    }

    @Test
    void readsHeadersInAnyKeyOrderWithoutPadding() throws IOException {
        // As other writers may produce it: keys sorted by name, data in another order, no alignment padding.
        String json = "{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[4,12]},"
                + "\"z\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}";
        ByteBuffer data = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putFloat(0.5f).putInt(7).putInt(-9);
        Path file = writeRaw("other.safetensors", json, data.array());
        Map<String, Tensor> read = SafeTensors.read(file);
        assertEquals(List.of("a", "z"), List.copyOf(read.keySet()));
        assertArrayEquals(new long[]{7, -9}, read.get("a").toLongArray());
        assertEquals(0, read.get("z").rank());
        assertEquals(0.5f, read.get("z").getFloat(0));
    }

    @Test
    void truncatedFileIsNamed() throws IOException {
        Path file = dir.resolve("model.safetensors");
        SafeTensors.write(file, everyDtype(), Map.of());
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 10));
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.read(file));
        assertTrue(e.getMessage().startsWith("checkpoint " + file + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("past the end of the data section") && e.getMessage().contains("truncated"), e.getMessage());
        Files.write(file, Arrays.copyOf(bytes, 5));
        assertEquals("checkpoint " + file + ": file has 5 bytes, fewer than the 8-byte header length",
                assertThrows(CheckpointException.class, () -> SafeTensors.read(file)).getMessage());
        Files.write(file, Arrays.copyOf(bytes, 40));
        assertTrue(assertThrows(CheckpointException.class, () -> SafeTensors.read(file)).getMessage()
                .contains("is impossible for a file of 40 bytes"));
    }

    @Test
    void flippedHeaderBytesAreNamed() throws IOException {
        Path file = dir.resolve("model.safetensors");
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        tensors.put("fc_0.w_0", ramp(DType.F32, 784, 2));
        tensors.put("fc_0.b_0", ramp(DType.F32, 2));
        SafeTensors.write(file, tensors, Map.of());
        byte[] good = Files.readAllBytes(file);
        String header = new String(good, 8, 100, StandardCharsets.ISO_8859_1);

        byte[] badJson = good.clone();
        badJson[8 + header.indexOf(':')] ^= 0x01;  // ':' becomes ';'
        Files.write(file, badJson);
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.read(file));
        assertTrue(e.getMessage().startsWith("checkpoint " + file + ": header is not valid JSON"), e.getMessage());

        byte[] badShape = good.clone();
        badShape[8 + header.indexOf("784")] = '5';  // 784 becomes 584
        Files.write(file, badShape);
        e = assertThrows(CheckpointException.class, () -> SafeTensors.read(file));
        assertEquals("checkpoint " + file + ": fc_0.w_0 is F32 [584, 2] (4672 bytes) but its data_offsets [0, 6272] span 6272 bytes",
                e.getMessage());
        assertEquals("fc_0.w_0", e.variable());

        byte[] badDtype = good.clone();
        badDtype[8 + header.indexOf("F32") + 1] = '1';  // F32 becomes F12
        Files.write(file, badDtype);
        assertEquals("checkpoint " + file + ": fc_0.w_0 has dtype F12; Fleet4J reads F16, BF16, F32, F64, U8, I32, I64",
                assertThrows(CheckpointException.class, () -> SafeTensors.read(file)).getMessage());
    }

    @Test
    void holesOverlapsAndTrailingBytesAreRejected() throws IOException {
        String hole = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
        Path holeFile = writeRaw("hole.safetensors", hole, new byte[12]);
        assertEquals("checkpoint " + holeFile + ": b starts at byte 8 of the data section, but a ends at 4; tensors must follow"
                + " each other without holes or overlaps", assertThrows(CheckpointException.class, () -> SafeTensors.read(holeFile)).getMessage());
        String overlap = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
        Path overlapFile = writeRaw("overlap.safetensors", overlap, new byte[8]);
        assertEquals("b", assertThrows(CheckpointException.class, () -> SafeTensors.read(overlapFile)).variable());
        String one = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
        Path trailing = writeRaw("trailing.safetensors", one, new byte[6]);
        assertTrue(assertThrows(CheckpointException.class, () -> SafeTensors.read(trailing)).getMessage()
                .contains("the data section has 6 bytes but the header's tensors cover 4"));
        String dup = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
        Path dupFile = writeRaw("dup.safetensors", dup, new byte[8]);
        assertTrue(assertThrows(CheckpointException.class, () -> SafeTensors.read(dupFile)).getMessage().contains("Duplicate field 'a'"));
    }

    @Test
    void loadIntoFillsTargetsOrNothing() {
        Path file = dir.resolve("ckpt.safetensors");
        Map<String, Tensor> saved = new LinkedHashMap<>();
        saved.put("fc_0.w_0", ramp(DType.F32, 784, 512));
        saved.put("fc_0.b_0", ramp(DType.F32, 512));
        SafeTensors.write(file, saved, Map.of());

        Map<String, Tensor> targets = new LinkedHashMap<>();
        targets.put("fc_0.b_0", Tensor.zeros(DType.F32, 512));
        targets.put("fc_0.w_0", Tensor.zeros(DType.F32, 784, 256));
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.loadInto(file, targets, true));
        assertEquals("checkpoint " + file + ": fc_0.w_0 has shape [784, 512], the program expects [784, 256]; nothing was loaded",
                e.getMessage());
        assertEquals("fc_0.w_0", e.variable());
        assertEquals(0f, targets.get("fc_0.b_0").getFloat(1), "a matching target was written although another failed");

        targets.put("fc_0.w_0", Tensor.zeros(DType.F64, 784, 512));
        assertEquals("checkpoint " + file + ": fc_0.w_0 has dtype float32, the program expects float64; nothing was loaded",
                assertThrows(CheckpointException.class, () -> SafeTensors.loadInto(file, targets, false)).getMessage());
        assertEquals(0f, targets.get("fc_0.b_0").getFloat(1));

        targets.put("fc_0.w_0", Tensor.zeros(DType.F32, 784, 512));
        LoadReport report = SafeTensors.loadInto(file, targets, true);
        assertEquals(List.of("fc_0.b_0", "fc_0.w_0"), report.loaded());
        assertSameTensors(Map.of("fc_0.b_0", saved.get("fc_0.b_0")), Map.of("fc_0.b_0", targets.get("fc_0.b_0")));
        assertSameTensors(Map.of("fc_0.w_0", saved.get("fc_0.w_0")), Map.of("fc_0.w_0", targets.get("fc_0.w_0")));
    }

    @Test
    void strictLoadingRejectsMissingAndUnexpectedVariables() {
        Path file = dir.resolve("ckpt.safetensors");
        SafeTensors.write(file, Map.of("w", ramp(DType.F32, 4), "extra", ramp(DType.F32, 2)), Map.of());
        Map<String, Tensor> targets = new LinkedHashMap<>();
        targets.put("w", Tensor.zeros(DType.F32, 4));
        targets.put("b", Tensor.zeros(DType.F32, 4));
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.loadInto(file, targets, true));
        assertTrue(e.getMessage().contains("2 problems, nothing was loaded"), e.getMessage());
        assertTrue(e.getMessage().contains("b is missing; the checkpoint holds "), e.getMessage());
        assertTrue(e.getMessage().contains("holds variables the program does not have: extra"), e.getMessage());
        assertEquals(0f, targets.get("w").getFloat(1));

        LoadReport lenient = SafeTensors.loadInto(file, targets, false);
        assertEquals(List.of("w"), lenient.loaded());
        assertEquals(List.of("b"), lenient.missing());
        assertEquals(List.of("extra"), lenient.unexpected());
        assertEquals(-1.75f, targets.get("w").getFloat(1));
        assertEquals(0f, targets.get("b").getFloat(1));
    }

    @Test
    void failingMidWriteLeavesTheOldCheckpointAndNoTemporaryFile() throws IOException {
        Path file = dir.resolve("model.safetensors");
        Map<String, Tensor> old = everyDtype();
        SafeTensors.write(file, old, Map.of("step", "1"));

        // A tensor whose memory is gone fails after the header and the first tensor reached the temporary file.
        Tensor freed;
        try (Arena arena = Arena.ofConfined()) {
            freed = Tensor.wrap(DType.F32, arena.allocate(16), 4);
        }
        Map<String, Tensor> broken = new LinkedHashMap<>();
        broken.put("fc_0.w_0", ramp(DType.F32, 100, 100));
        broken.put("fc_0.b_0", freed);
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.write(file, broken, Map.of("step", "2")));
        assertEquals("fc_0.b_0", e.variable());
        assertTrue(e.getMessage().contains("the previous file, if any, is unchanged"), e.getMessage());
        assertOldCheckpointIntact(file, old);
    }

    @Test
    void aTensorMapThatThrowsHalfwayLeavesTheOldCheckpoint() throws IOException {
        Path file = dir.resolve("model.safetensors");
        Map<String, Tensor> old = everyDtype();
        SafeTensors.write(file, old, Map.of("step", "1"));
        Map<String, Tensor> failing = new AbstractMap<>() {
            @Override
            public Set<Entry<String, Tensor>> entrySet() {
                return new AbstractSet<>() {
                    @Override
                    public Iterator<Entry<String, Tensor>> iterator() {
                        Iterator<Entry<String, Tensor>> inner = everyDtype().entrySet().iterator();
                        return new Iterator<>() {
                            int served;

                            @Override
                            public boolean hasNext() {
                                return inner.hasNext();
                            }

                            @Override
                            public Entry<String, Tensor> next() {
                                if (++served == 3) {
                                    throw new IllegalStateException("parameter server went away");
                                }
                                return inner.next();
                            }
                        };
                    }

                    @Override
                    public int size() {
                        return 7;
                    }
                };
            }
        };
        assertThrows(IllegalStateException.class, () -> SafeTensors.write(file, failing, Map.of("step", "2")));
        assertOldCheckpointIntact(file, old);
    }

    @Test
    void missingFileAndDirectoryAreNamed() {
        Path missing = dir.resolve("none.safetensors");
        assertEquals("checkpoint " + missing + ": file does not exist",
                assertThrows(CheckpointException.class, () -> SafeTensors.read(missing)).getMessage());
        Path noDir = dir.resolve("no/such/dir/x.safetensors");
        assertTrue(assertThrows(CheckpointException.class, () -> SafeTensors.write(noDir, Map.of(), Map.of())).getMessage()
                .contains("does not exist"));
        assertTrue(assertThrows(CheckpointException.class,
                () -> SafeTensors.write(missing, Map.of("__metadata__", Tensor.scalar(1)), Map.of())).getMessage()
                .contains("'__metadata__' cannot name a tensor"));
    }

    @Test
    void aTemporaryFileLeftByAKilledWriterIsRemovedByTheNextSaveOfTheSameTarget() throws IOException {
        Path file = dir.resolve("model.safetensors");
        Path stale = Files.createFile(dir.resolve(".model.safetensors.4711.tmp"));
        Path otherTarget = Files.createFile(dir.resolve(".model.safetensors.bak.4711.tmp"));
        Path live = Files.createFile(dir.resolve(".model.safetensors.815.tmp"));
        try (FileChannel writer = FileChannel.open(live, StandardOpenOption.WRITE); FileLock held = writer.lock()) {
            SafeTensors.write(file, everyDtype(), Map.of());
        }
        assertFalse(Files.exists(stale), "the dead writer's temporary file is still there");
        assertTrue(Files.exists(live), "a temporary file that a writer holds was removed");
        assertTrue(Files.exists(otherTarget), "another target's temporary file was removed");
        assertSameTensors(everyDtype(), SafeTensors.read(file));
    }

    @Test
    void aCheckpointGetsThePermissionsOfAnyNewFile() throws IOException {
        Path file = dir.resolve("model.safetensors");
        SafeTensors.write(file, everyDtype(), Map.of());
        Path plain = Files.createFile(dir.resolve("plain"));
        assertEquals(Files.getPosixFilePermissions(plain), Files.getPosixFilePermissions(file));
    }

    @Test
    void checkWritableNamesAMissingDirectoryADirectoryAndAnUnwritablePlaceAndLeavesNothing() throws IOException {
        Path ok = dir.resolve("model.safetensors");
        SafeTensors.checkWritable(ok);
        assertEquals(List.of(), listDir(), "the check left a file behind");

        Path noDir = dir.resolve("missing/model.safetensors");
        assertEquals("checkpoint " + noDir + ": directory " + dir.resolve("missing") + " does not exist; create it first",
                assertThrows(CheckpointException.class, () -> SafeTensors.checkWritable(noDir)).getMessage());
        assertEquals("checkpoint " + dir + ": is a directory; name a file in it, e.g. " + dir.resolve("checkpoint.safetensors"),
                assertThrows(CheckpointException.class, () -> SafeTensors.checkWritable(dir)).getMessage());
        Path locked = unwritableDirectory(dir).resolve("model.safetensors");
        assertEquals("checkpoint " + locked + ": directory " + locked.getParent() + " does not let this user create files"
                        + " (permission denied); choose a writable directory",
                assertThrows(CheckpointException.class, () -> SafeTensors.checkWritable(locked)).getMessage());
        try (Stream<Path> files = Files.list(locked.getParent())) {
            assertEquals(0, files.filter(f -> f.getFileName().toString().startsWith(".model.safetensors.")).count());
        }
    }

    /**
     * A directory this process cannot create files in: one without write permission, or, for root (whom permissions
     * do not stop), /sys, which refuses new files to everyone.
     */
    static Path unwritableDirectory(Path parent) throws IOException {
        Path readOnly = Files.createDirectories(parent.resolve("read-only"));
        Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-xr-xr-x"));
        return Files.isWritable(readOnly) ? Path.of("/sys") : readOnly;
    }

    @Test
    void aCheckpointHoldingNanOrInfinityIsRefusedNamingTheTensorAndTheFirstBadElement() {
        Path file = dir.resolve("diverged.safetensors");
        Tensor w = ramp(DType.F32, 3, 4);
        w.set(Float.NaN, 1, 2);
        w.set(Float.POSITIVE_INFINITY, 2, 0);
        Tensor b = ramp(DType.BF16, 4);
        b.setFloat(3, Float.NEGATIVE_INFINITY);
        Map<String, Tensor> saved = new LinkedHashMap<>();
        saved.put("w", w);
        saved.put("step", Tensor.ofLongs(new long[]{7}));
        SafeTensors.write(file, saved, Map.of());

        Map<String, Tensor> targets = new LinkedHashMap<>();
        targets.put("w", Tensor.zeros(DType.F32, 3, 4));
        targets.put("step", Tensor.zeros(DType.I64, 1));
        CheckpointException e = assertThrows(CheckpointException.class, () -> SafeTensors.loadInto(file, targets, true));
        assertEquals("checkpoint " + file + ": w holds NaN at [1, 2] (flat index 6), so the training that saved it had"
                + " diverged (a load allowing non-finite values reads it for inspection); nothing was loaded", e.getMessage());
        assertEquals("w", e.variable());
        assertEquals(0, targets.get("step").getLong(0), "a finite tensor was loaded although another was refused");

        LoadReport report = SafeTensors.loadInto(file, targets, LoadOptions.STRICT.allowingNonFinite());
        assertEquals(List.of("w", "step"), report.loaded());
        assertTrue(Float.isNaN(targets.get("w").get(1, 2)));
        assertEquals(Float.POSITIVE_INFINITY, targets.get("w").get(2, 0));

        SafeTensors.write(file, Map.of("b", b), Map.of());
        Map<String, Tensor> bf16 = Map.of("b", Tensor.zeros(DType.BF16, 4));
        assertTrue(assertThrows(CheckpointException.class, () -> SafeTensors.loadInto(file, bf16, LoadOptions.LENIENT))
                .getMessage().startsWith("checkpoint " + file + ": b holds -Infinity at [3] (flat index 3)"));
    }

    private List<Path> listDir() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.toList();
        }
    }

    private void assertOldCheckpointIntact(Path file, Map<String, Tensor> old) throws IOException {
        Checkpoint read = SafeTensors.readCheckpoint(file);
        assertSameTensors(old, read.tensors());
        assertEquals(Map.of("step", "1"), read.metadata());
        List<Path> left;
        try (Stream<Path> files = Files.list(dir)) {
            left = new ArrayList<>(files.toList());
        }
        assertEquals(List.of(file), left, "temporary files left behind");
    }

    private Path writeRaw(String name, String json, byte[] data) throws IOException {
        byte[] header = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.allocate(8 + header.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        buf.putLong(header.length).put(header).put(data);
        Path file = dir.resolve(name);
        Files.write(file, buf.array());
        return file;
    }
}
