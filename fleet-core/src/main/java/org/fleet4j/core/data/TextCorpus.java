package org.fleet4j.core.data;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * A character-level language-model corpus: a training and a validation text as ids of one {@link CharVocabulary} (the
 * characters of both, and the newline). Either the English first names shipped in {@code data/names} (both files,
 * the names shuffled by a fixed seed, 90 % of them for training, the rest for validation, each name followed by a
 * newline), or any UTF-8 text file, whose first 90 % of characters train and the rest validate (nanoGPT's split).
 *
 * <p>A file that is not text is refused naming it, what was found and where: an empty file, a NUL byte (a binary
 * file), bytes that are not UTF-8, control characters, a text of fewer than two distinct characters (besides line
 * breaks: nothing to learn). A leading byte-order mark is dropped and CR LF line ends read as LF.
 */
public record TextCorpus(String source, CharVocabulary vocabulary, int[] train, int[] validation) {
    /** The folder of the shipped names under the data folder, and its two files. */
    public static final String NAMES_FOLDER = "names";
    public static final List<String> NAMES_FILES = List.of("female-first-names-en.txt", "male-first-names-en.txt");
    /** The seed of the names' shuffle: fixed, so that every run, whatever its --seed, validates on the same names. */
    public static final long NAMES_SPLIT_SEED = 0;
    /** The share of the names, or of a text's characters, that trains. */
    public static final double TRAIN_FRACTION = 0.9;

    /** The shipped names (see {@link #bundledNamesDirectory()}). */
    public static TextCorpus names() {
        return names(bundledNamesDirectory());
    }

    /** The names of the two files of {@code dir}, shuffled and split by name. */
    public static TextCorpus names(Path dir) {
        List<String> names = new ArrayList<>();
        for (String f : NAMES_FILES) {
            Path file = dir.resolve(f);
            for (String line : readText(file).split("\n")) {
                if (!line.isBlank()) {
                    names.add(line.strip());
                }
            }
        }
        int[] order = new int[names.size()];
        EpochPermutation.fill(order, NAMES_SPLIT_SEED, 0);
        int trainNames = (int) Math.round(TRAIN_FRACTION * names.size());
        StringBuilder train = new StringBuilder();
        StringBuilder validation = new StringBuilder();
        for (int i = 0; i < order.length; i++) {
            (i < trainNames ? train : validation).append(names.get(order[i])).append('\n');
        }
        return of(dir + " (" + names.size() + " names: " + trainNames + " train, " + (names.size() - trainNames)
                + " validation)", train.toString(), validation.toString());
    }

    /** Any UTF-8 text file: its first 90 % of characters train, the rest validate. */
    public static TextCorpus file(Path file) {
        String text = readText(file);
        int characters = text.codePointCount(0, text.length());
        int cut = text.offsetByCodePoints(0, (int) (TRAIN_FRACTION * characters));
        return of(file + " (" + characters + " characters)", text.substring(0, cut), text.substring(cut));
    }

    private static TextCorpus of(String source, String train, String validation) {
        CharVocabulary vocabulary = CharVocabulary.of(train + validation);
        return new TextCorpus(source, vocabulary, vocabulary.encode(train), vocabulary.encode(validation));
    }

    /**
     * The text of a UTF-8 file, checked to be text worth modelling (see the class comment), without a byte-order mark
     * and with LF line ends; fails with a {@link DataFormatException} naming the file.
     */
    public static String readText(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new DataFormatException(file, Files.exists(file) ? "cannot be read (" + e + ")"
                    : "does not exist; give a UTF-8 text file", e);
        }
        if (bytes.length == 0) {
            throw new DataFormatException(file, "is empty; give a UTF-8 text file of at least a few lines");
        }
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                throw new DataFormatException(file, "is not text: it holds a NUL byte at offset " + i
                        + " (a binary file?); give a UTF-8 text file");
            }
        }
        String text = decode(file, bytes);
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1);
        }
        text = text.replace("\r\n", "\n");
        TreeSet<Integer> distinct = new TreeSet<>();
        int line = 1;
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            if (c == '\n') {
                line++;
            } else if (c < 0x20 && c != '\t' && c != '\f' && c != '\r' || c == 0x7F) {
                throw new DataFormatException(file, "is not text: line " + line + " holds the control character "
                        + CharVocabulary.describe(c) + "; give a UTF-8 text file");
            } else if (c != '\r') {
                distinct.add(c);
            }
            i += Character.charCount(c);
        }
        if (distinct.size() < 2) {
            throw new DataFormatException(file, (distinct.isEmpty() ? "holds only line breaks"
                    : "holds one distinct character, " + CharVocabulary.describe(distinct.first()) + ", besides line breaks")
                    + ": there is nothing to learn; give a text of at least two different characters");
        }
        return text;
    }

    private static String decode(Path file, byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        var result = decoder.decode(in, out, true);
        if (result.isError()) {
            int at = in.position();
            throw new DataFormatException(file, String.format(Locale.ROOT, "is not UTF-8 text: byte 0x%02X at offset %d"
                    + " does not begin or continue a UTF-8 character (a binary file, or another encoding such as Latin-1:"
                    + " convert it with iconv -t UTF-8)", bytes[at] & 0xFF, at));
        }
        decoder.flush(out);
        return out.flip().toString();
    }

    /**
     * The shipped names folder: {@code $FLEET_DATA_DIR/names} when that variable is set, otherwise the first
     * {@code data/names} found walking up from the working directory, then from the location of this code.
     */
    public static Path bundledNamesDirectory() {
        String env = System.getenv(MnistDataset.DATA_DIR_ENV);
        if (env != null && !env.isBlank()) {
            Path dir = Path.of(env).toAbsolutePath().resolve(NAMES_FOLDER);
            if (!holdsNames(dir)) {
                throw new DataFormatException(dir, MnistDataset.DATA_DIR_ENV + " is set to " + env + ", but this folder"
                        + " does not hold " + NAMES_FILES);
            }
            return dir;
        }
        Path working = Path.of("").toAbsolutePath();
        for (Path start : new Path[]{working, codeLocation()}) {
            for (Path p = start; p != null; p = p.getParent()) {
                Path candidate = p.resolve("data").resolve(NAMES_FOLDER);
                if (holdsNames(candidate)) {
                    return candidate;
                }
            }
        }
        throw new DataFormatException(working, "no data/names folder found above the working directory or the code"
                + " location; set " + MnistDataset.DATA_DIR_ENV + " to the folder that holds names/, or give --data FILE");
    }

    private static boolean holdsNames(Path dir) {
        return NAMES_FILES.stream().allMatch(f -> Files.isRegularFile(dir.resolve(f)));
    }

    private static Path codeLocation() {
        CodeSource source = TextCorpus.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return null;
        }
        try {
            return Path.of(source.getLocation().toURI()).toAbsolutePath();
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }
}
