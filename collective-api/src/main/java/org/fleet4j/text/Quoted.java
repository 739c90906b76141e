package org.fleet4j.text;

import java.util.Locale;

/**
 * Input as a message quotes it: at most {@link #LIMIT} characters shown, and the full length said when more came, so a
 * 10 MB field or a 1 MB strategy value gives a line a person can read and a log tail can hold; every character that
 * is not printable is escaped ({@code \x1b}, {@code \n}, {@code \t}), so a binary file cannot drive the terminal.
 * For example {@code 'abc...' (10485760 characters)}.
 */
public final class Quoted {
    /** The most characters of a quote's text, escapes included. */
    public static final int LIMIT = 80;
    /** The most characters of a line of a message from another library ({@link #message}): a few terminal lines. */
    public static final int MESSAGE_LIMIT = 1000;
    private static final String MORE = "...";

    private Quoted() {
    }

    /** {@code 'input'}, shortened and escaped as the class says; {@code null} for null. */
    public static String of(CharSequence input) {
        return of(input, '\'');
    }

    /** As {@link #of(CharSequence)} between {@code quote} marks, e.g. the {@code "} of a string a file wrote. */
    public static String of(CharSequence input, char quote) {
        return render(input, String.valueOf(quote));
    }

    /** As {@link #of(CharSequence)} without the quote marks, for input that a message names as it is (a key, a name). */
    public static String bare(CharSequence input) {
        return render(input, "");
    }

    private static String render(CharSequence input, String mark) {
        if (input == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(input.length(), LIMIT) + 32).append(mark);
        int shown = append(out, input, 0, input.length(), LIMIT);
        out.append(mark);
        if (shown < input.length()) {
            out.append(" (").append(input.length()).append(" characters)");
        }
        return out.toString();
    }

    /**
     * A message written by another library (a parser, the command-line reader) that may quote input whole: every
     * quoted span ({@code '...'} or {@code "..."}, opened where no letter or digit comes before, so that the
     * apostrophe of "rank's" opens none) longer than {@link #LIMIT} is shortened as {@link #of} does, non-printable
     * characters are escaped, and the whole is cut at {@link #MESSAGE_LIMIT} characters.
     */
    public static String message(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), MESSAGE_LIMIT) + 32);
        int i = 0;
        while (i < text.length() && out.length() < MESSAGE_LIMIT) {
            char c = text.charAt(i);
            boolean opens = (c == '\'' || c == '"') && (i == 0 || !Character.isLetterOrDigit(text.charAt(i - 1)));
            int close = opens ? text.indexOf(c, i + 1) : -1;
            int end = close > i ? close + 1 : i + Character.charCount(text.codePointAt(i));
            if (close - i - 1 > LIMIT) {
                out.append(c);
                append(out, text, i + 1, close, LIMIT);
                out.append(c).append(" (").append(close - i - 1).append(" characters)");
            } else {
                append(out, text, i, end, Integer.MAX_VALUE);
            }
            i = end;
        }
        if (i < text.length()) {
            out.append(MORE).append(" (").append(text.length()).append(" characters)");
        }
        return out.toString();
    }

    /**
     * Appends {@code text[from, to)} escaped; when that is more than {@code room} characters, as much as leaves room
     * for a closing {@code ...}. Returns how many input characters it took.
     */
    private static int append(StringBuilder out, CharSequence text, int from, int to, int room) {
        boolean whole = escapedLength(text, from, to, room) <= room;
        int limit = whole ? room : room - MORE.length();
        int used = 0;
        int i = from;
        while (i < to) {
            int cp = Character.codePointAt(text, i);
            String shown = printable(cp) ? null : escape(cp);
            int need = shown == null ? Character.charCount(cp) : shown.length();
            if (used + need > limit) {
                out.append(MORE);
                return i - from;
            }
            if (shown == null) {
                out.appendCodePoint(cp);
            } else {
                out.append(shown);
            }
            used += need;
            i += Character.charCount(cp);
        }
        return i - from;
    }

    /** The escaped length of {@code text[from, to)}, counted no further than just past {@code room}. */
    private static long escapedLength(CharSequence text, int from, int to, int room) {
        long n = 0;
        for (int i = from; i < to && n <= room; ) {
            int cp = Character.codePointAt(text, i);
            n += printable(cp) ? Character.charCount(cp) : escape(cp).length();
            i += Character.charCount(cp);
        }
        return n;
    }

    private static boolean printable(int cp) {
        if (cp >= 0x20 && cp < 0x7f) {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.UNASSIGNED, Character.SURROGATE, Character.PRIVATE_USE,
                 Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    private static String escape(int cp) {
        return switch (cp) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> "\\t";
            case 0 -> "\\0";
            default -> String.format(Locale.ROOT, cp <= 0xff ? "\\x%02x" : cp <= 0xffff ? "\\u%04x" : "\\U%08x", cp);
        };
    }
}
