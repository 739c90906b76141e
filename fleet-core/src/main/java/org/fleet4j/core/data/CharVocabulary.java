package org.fleet4j.core.data;

import java.util.Arrays;
import java.util.TreeSet;
import org.fleet4j.text.Quoted;

/**
 * The characters (Unicode code points) of a text, each with an id: 0..size-1 in code-point order, as nanoGPT's
 * {@code sorted(set(text))}. The newline is always one of them, since it ends every line and every sampled name.
 */
public final class CharVocabulary {
    public static final int NEWLINE = '\n';

    private final int[] codePoints;

    private CharVocabulary(int[] codePoints) {
        this.codePoints = codePoints;
    }

    /** The characters present in {@code text}, and the newline. */
    public static CharVocabulary of(String text) {
        TreeSet<Integer> set = new TreeSet<>();
        text.codePoints().forEach(set::add);
        set.add(NEWLINE);
        return new CharVocabulary(set.stream().mapToInt(Integer::intValue).toArray());
    }

    public int size() {
        return codePoints.length;
    }

    /** The characters in id order, as one string. */
    public String characters() {
        return new String(codePoints, 0, codePoints.length);
    }

    public boolean contains(int codePoint) {
        return Arrays.binarySearch(codePoints, codePoint) >= 0;
    }

    /** The id of a character; fails naming it when it is not in the vocabulary. */
    public int id(int codePoint) {
        int i = Arrays.binarySearch(codePoints, codePoint);
        if (i < 0) {
            throw new IllegalArgumentException("character " + describe(codePoint) + " is not in the vocabulary of "
                    + size() + " characters " + Quoted.of(characters()) + "; use only characters of the training text");
        }
        return i;
    }

    /** The ids of every character of {@code text}, in order. */
    public int[] encode(String text) {
        return text.codePoints().map(this::id).toArray();
    }

    public int codePoint(int id) {
        return codePoints[id];
    }

    /** The text of these ids. */
    public String decode(int[] ids) {
        StringBuilder s = new StringBuilder(ids.length);
        for (int id : ids) {
            s.appendCodePoint(codePoints[id]);
        }
        return s.toString();
    }

    /** A character for a message: quoted and escaped, with its code point ('a' U+0061, '\n' U+000A). */
    static String describe(int codePoint) {
        return Quoted.of(Character.toString(codePoint)) + String.format(" U+%04X", codePoint);
    }
}
