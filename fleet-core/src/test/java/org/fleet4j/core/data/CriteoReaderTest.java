package org.fleet4j.core.data;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CriteoReaderTest {
    @TempDir
    Path dir;

    /** A well-formed line whose first integer feature is {@code marker}, so a test can tell lines apart. */
    private static String line(long marker) {
        StringBuilder s = new StringBuilder().append(marker % 2);
        s.append('\t').append(marker);
        for (int i = 1; i < CriteoRow.DENSE; i++) {
            s.append('\t').append(i);
        }
        for (int i = 0; i < CriteoRow.SPARSE; i++) {
            s.append('\t').append(Long.toHexString(marker * 31 + i));
        }
        return s.toString();
    }

    private Path write(String name, List<String> lines, boolean gzip) throws IOException {
        Path f = dir.resolve(name);
        byte[] bytes = (String.join("\n", lines) + "\n").getBytes(StandardCharsets.ISO_8859_1);
        if (gzip) {
            try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(f))) {
                out.write(bytes);
            }
        } else {
            Files.write(f, bytes);
        }
        return f;
    }

    private static List<Long> markers(CriteoReader r) {
        List<Long> out = new ArrayList<>();
        CriteoRow row = new CriteoRow();
        while (r.next(row)) {
            out.add(row.dense(0));
        }
        return out;
    }

    @Test
    void parsesLabelIntegersHexIdsAndEmptyFields() {
        CriteoRow row = new CriteoRow();
        String line = "1\t-3\t\t7" + "\t".repeat(10) + "\tffffffffffffffff\t\t68fd1e64" + "\t".repeat(22) + "\t0A";
        assertNull(row.parse(line));
        assertEquals(1, row.label());
        assertEquals(-3, row.dense(0));
        assertTrue(row.denseMissing(1));
        assertEquals(0, row.dense(1));
        assertEquals(7, row.dense(2));
        assertFalse(row.denseMissing(2));
        assertTrue(row.denseMissing(12));
        assertEquals(-1L, row.sparse(0), "16 hex digits are the full 64 bits");
        assertTrue(row.sparseMissing(1));
        assertEquals(0x68fd1e64L, row.sparse(2));
        assertTrue(row.sparseMissing(24));
        assertEquals(10, row.sparse(25), "upper-case hex digits");
    }

    @Test
    void namesWhatIsWrongWithAMalformedLine() {
        CriteoRow row = new CriteoRow();
        String good = line(5);
        assertTrue(row.parse("2" + good.substring(1)).contains("label '2' is not 0 or 1"));
        assertTrue(row.parse(good.replaceFirst("\t5\t", "\t5x\t")).contains("integer feature I1 '5x'"));
        assertTrue(row.parse(good + "\tzz").contains("more than 40"));
        assertTrue(row.parse(good.substring(0, good.lastIndexOf('\t'))).contains("has 39 tab-separated fields, expected 40"));
        String lastHex = good.substring(good.lastIndexOf('\t') + 1);
        assertTrue(row.parse(good.substring(0, good.lastIndexOf('\t') + 1) + "g" + lastHex)
                .contains("categorical feature C26 'g" + lastHex + "' is not hexadecimal"));
    }

    @Test
    void quotesAHugeOrBinaryFieldAsABoundedEscapedPrefix() {
        CriteoRow row = new CriteoRow();
        String good = line(5);
        String huge = row.parse(good.replaceFirst("\t5\t", "\t" + "x".repeat(10 << 20) + "\t"));
        assertEquals("integer feature I1 '" + "x".repeat(77) + "...' (10485760 characters) is not a decimal integer", huge);
        String binary = row.parse(good.replaceFirst("\t5\t", "\t\u001b[2J\u0000\t"));
        assertEquals("integer feature I1 '\\x1b[2J\\0' is not a decimal integer", binary);
    }

    @Test
    void readsGzipAndPlainFilesAlikeByTheirMagicBytesNotTheirNames() throws IOException {
        List<String> lines = List.of(line(1), line(2), line(3));
        Path gz = write("data.txt", lines, true);
        Path plain = write("data.gz", lines, false);
        try (CriteoReader a = CriteoReader.open(List.of(gz), false); CriteoReader b = CriteoReader.open(List.of(plain), false)) {
            assertEquals(List.of(1L, 2L, 3L), markers(a));
            assertEquals(List.of(1L, 2L, 3L), markers(b));
            assertEquals(3, a.rows());
        }
    }

    @Test
    void aMalformedLineStopsTheReaderNamingTheFileAndLineUnlessBadLinesAreSkipped() throws IOException {
        Path f = write("part-1.gz", List.of(line(1), line(2), "1\t2\t3", line(4), ""), true);
        try (CriteoReader r = CriteoReader.open(List.of(f), false)) {
            CriteoRow row = new CriteoRow();
            assertTrue(r.next(row));
            assertTrue(r.next(row));
            DataFormatException e = assertThrows(DataFormatException.class, () -> r.next(row));
            assertTrue(e.getMessage().startsWith(f + ": line 3 has 3 tab-separated fields"), e.getMessage());
            assertTrue(e.getMessage().contains("--skip_bad_lines"), e.getMessage());
        }
        try (CriteoReader r = CriteoReader.open(List.of(f), true)) {
            assertEquals(List.of(1L, 2L, 4L), markers(r));
            assertEquals(2, r.skippedLines());
            assertTrue(r.firstSkipped().startsWith(f + ": line 3 has 3"), r.firstSkipped());
        }
    }

    @Test
    void aTruncatedGzipFileIsNamed() throws IOException {
        Path f = write("cut.gz", Collections.nCopies(2000, line(7)), true);
        byte[] all = Files.readAllBytes(f);
        Files.write(f, java.util.Arrays.copyOf(all, all.length / 2));
        try (CriteoReader r = CriteoReader.open(List.of(f), false)) {
            DataFormatException e = assertThrows(DataFormatException.class, () -> markers(r));
            assertTrue(e.getMessage().startsWith(f + ": gzip stream is truncated or corrupt"), e.getMessage());
        }
        assertThrows(DataFormatException.class, () -> CriteoReader.open(List.of(dir.resolve("absent")), false));
    }

    @Test
    void everyLineGoesToExactlyOneWorkerWhetherShardedByLineOrByFile() throws IOException {
        List<Path> files = new ArrayList<>();
        long next = 0;
        for (int k = 0; k < 5; k++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < 7 + 3 * k; i++) {
                lines.add(line(next++));
            }
            files.add(write("part-" + k, lines, k % 2 == 0));
        }
        for (int workers : new int[]{1, 2, 3, 5, 8}) {
            List<Long> seen = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                try (CriteoReader r = CriteoReader.open(files, w, workers, false)) {
                    assertEquals(workers <= 5 ? CriteoReader.Sharding.BY_FILE : CriteoReader.Sharding.BY_LINE, r.sharding());
                    List<Long> mine = markers(r);
                    if (r.sharding() == CriteoReader.Sharding.BY_LINE) {
                        int worker = w;
                        assertTrue(mine.stream().allMatch(m -> m % workers == worker), "line stride of worker " + w);
                    }
                    seen.addAll(mine);
                }
            }
            Collections.sort(seen);
            List<Long> all = new ArrayList<>();
            for (long m = 0; m < next; m++) {
                all.add(m);
            }
            assertEquals(all, seen, workers + " workers");
        }
    }
}
