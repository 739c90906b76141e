package org.fleet4j.core.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The names corpus and any text file as character ids; what is not text is refused naming the file and what was
 * found; windows of a text, random (a function of seed and batch) and fixed.
 */
class TextCorpusTest {
    @TempDir
    Path dir;

    @Test
    void theShippedNamesSplitNinetyTenByNameWithEveryNameOnce() {
        TextCorpus names = TextCorpus.names();
        assertEquals(54, names.vocabulary().size(), "52 letters, the hyphen and the newline: "
                + names.vocabulary().characters());
        assertEquals(0, names.vocabulary().id('\n'), "the newline sorts first, as in nanoGPT's sorted(set(text))");
        String train = names.vocabulary().decode(names.train());
        String validation = names.vocabulary().decode(names.validation());
        List<String> trainNames = train.lines().toList();
        List<String> validationNames = validation.lines().toList();
        assertEquals(7964, trainNames.size());
        assertEquals(885, validationNames.size());
        assertTrue(train.endsWith("\n") && validation.endsWith("\n"));
        List<String> all = new java.util.ArrayList<>(trainNames);
        all.addAll(validationNames);
        all.sort(null);
        List<String> shipped = new java.util.ArrayList<>();
        for (String f : TextCorpus.NAMES_FILES) {
            shipped.addAll(readLines(TextCorpus.bundledNamesDirectory().resolve(f)));
        }
        shipped.sort(null);
        assertEquals(shipped, all, "every shipped name, once");
        // shuffled, not the files' alphabetical order, and the same on every call
        assertNotEquals(trainNames.subList(0, 20), shipped.subList(0, 20));
        assertArrayEquals(names.train(), TextCorpus.names().train());
    }

    @Test
    void aTextFileTrainsOnItsFirstNinetyPercentAndValidatesOnTheRest() throws Exception {
        Path file = Files.writeString(dir.resolve("t.txt"), "\uFEFF" + "abcdefghij\r\n".repeat(10), StandardCharsets.UTF_8);
        TextCorpus c = TextCorpus.file(file);
        assertEquals(11, c.vocabulary().size(), "ten letters and the newline; the BOM and CR dropped");
        assertEquals(99, c.train().length);
        assertEquals(11, c.validation().length);
        assertEquals("abcdefghij\n".repeat(10), c.vocabulary().decode(c.train()) + c.vocabulary().decode(c.validation()));
    }

    @Test
    void whatIsNotTextIsRefusedNamingTheFileAndWhatWasFound() throws Exception {
        assertRefused(new byte[0], "is empty; give a UTF-8 text file");
        assertRefused(new byte[]{'a', 'b', 'c', 0, 1, 2}, "is not text: it holds a NUL byte at offset 3 (a binary file?)");
        assertRefused("caf\u00e9 au lait\n".getBytes(StandardCharsets.ISO_8859_1),
                "is not UTF-8 text: byte 0xE9 at offset 3 does not begin or continue a UTF-8 character");
        byte[] cut = "caf\u00e9".getBytes(StandardCharsets.UTF_8);
        assertRefused(Arrays.copyOf(cut, cut.length - 1), "is not UTF-8 text: byte 0xC3 at offset 3");
        assertRefused("ab\ncd\u001b[31m\n".getBytes(StandardCharsets.UTF_8),
                "is not text: line 2 holds the control character '\\x1b' U+001B");
        assertRefused("aaaa\naaa\naa\n".getBytes(StandardCharsets.UTF_8),
                "holds one distinct character, 'a' U+0061, besides line breaks: there is nothing to learn");
        assertRefused("\n\n\r\n".getBytes(StandardCharsets.UTF_8), "holds only line breaks: there is nothing to learn");
        Path missing = dir.resolve("missing.txt");
        DataFormatException e = assertThrows(DataFormatException.class, () -> TextCorpus.file(missing));
        assertEquals(missing + ": does not exist; give a UTF-8 text file", e.getMessage());
    }

    private void assertRefused(byte[] content, String expected) throws Exception {
        Path file = Files.write(dir.resolve("bad.txt"), content);
        DataFormatException e = assertThrows(DataFormatException.class, () -> TextCorpus.file(file));
        assertTrue(e.getMessage().startsWith(file + ": " + expected), e.getMessage());
    }

    @Test
    void aCharacterOutsideTheVocabularyIsNamed() {
        CharVocabulary v = CharVocabulary.of("abc");
        assertEquals("\nabc", v.characters());
        assertArrayEquals(new int[]{3, 1, 0}, v.encode("ca\n"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> v.encode("abz"));
        assertEquals("character 'z' U+007A is not in the vocabulary of 4 characters '\\nabc'; use only characters of"
                + " the training text", e.getMessage());
    }

    @Test
    void randomWindowsDependOnlyOnSeedAndBatchAndCoverTheText() {
        int[] text = new int[1000];
        for (int i = 0; i < text.length; i++) {
            text[i] = i % 7;
        }
        TextWindows w = new TextWindows(text, 16, "the text");
        assertEquals(984, w.count());
        assertArrayEquals(w.randomStarts(3, 5, 64), w.randomStarts(3, 5, 64));
        assertNotEquals(Arrays.toString(w.randomStarts(3, 5, 64)), Arrays.toString(w.randomStarts(3, 6, 64)));
        assertNotEquals(Arrays.toString(w.randomStarts(3, 5, 64)), Arrays.toString(w.randomStarts(4, 5, 64)));
        Set<Long> seen = new HashSet<>();
        for (int b = 0; b < 200; b++) {
            for (long s : w.randomStarts(1, b, 32)) {
                assertTrue(s >= 0 && s < w.count());
                seen.add(s);
            }
        }
        assertTrue(seen.size() > 0.99 * w.count(), "6,400 draws reach nearly every one of 984 starts: " + seen.size());
        assertTrue(seen.contains(0L) && seen.contains(w.count() - 1), "the first and last windows too");

        Tensor[] batch = w.batch(new long[]{0, 983});
        for (int t = 0; t < 16; t++) {
            assertEquals(text[t], batch[0].getLong(t));
            assertEquals(text[t + 1], batch[1].getLong(t), "the target is the next character");
            assertEquals(text[983 + t + 1], batch[1].getLong(16 + t));
        }
        assertThrows(IllegalArgumentException.class, () -> w.batch(new long[]{984}));
    }

    @Test
    void validationWindowsDoNotOverlapAndALimitSpreadsThem() {
        TextWindows w = new TextWindows(new int[101], 10, "the text");
        assertArrayEquals(new long[]{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}, w.sweepStarts(0));
        assertArrayEquals(new long[]{0, 50}, w.sweepStarts(2));
        assertArrayEquals(w.sweepStarts(0), w.sweepStarts(99));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new TextWindows(new int[8], 8, "the validation text of x.txt"));
        assertEquals("the validation text of x.txt has 8 characters, fewer than block_size + 1 = 9 that one window"
                + " needs; give a longer text or a smaller block_size", e.getMessage());
    }

    @Test
    void aWindowFileIsCheckedLineByLine() throws Exception {
        Path ok = Files.writeString(dir.resolve("w.txt"), "0 5\n 7 1 \n");
        assertArrayEquals(new long[]{7, 1}, WindowFile.read(ok, 2, 8).starts(1));
        assertEquals(ok + " has 2 batches; batch 3 is past its end: give a file with a line for every step",
                assertThrows(IllegalArgumentException.class, () -> WindowFile.read(ok, 2, 8).starts(2)).getMessage());
        assertEquals(ok + ": line 1 has 2 window starts; every line needs one per row of the global batch, 3",
                assertThrows(DataFormatException.class, () -> WindowFile.read(ok, 3, 8)).getMessage());
        assertEquals(ok + ": line 2: window start 7 is outside the training text's 0..6",
                assertThrows(DataFormatException.class, () -> WindowFile.read(ok, 2, 7)).getMessage());
        Path words = Files.writeString(dir.resolve("x.txt"), "0 x\n");
        assertEquals(words + ": line 1: 'x' is not an integer",
                assertThrows(DataFormatException.class, () -> WindowFile.read(words, 2, 8)).getMessage());
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
