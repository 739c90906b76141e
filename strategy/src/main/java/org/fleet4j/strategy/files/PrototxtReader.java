package org.fleet4j.strategy.files;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.fleet4j.strategy.schema.RawValue;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.text.Quoted;

/**
 * Reads the subset of the protobuf text format that Paddle's {@code save_to_prototxt} writes:
 * {@code key: value}, nested {@code name { ... }} (also {@code name: { }} and {@code < >}),
 * repeated fields as repeated keys or {@code [a, b]}, quoted strings, bare enum names and
 * {@code #} comments. Errors carry the line.
 */
final class PrototxtReader {
    private static final Pattern NUMBER = Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?[fF]?");

    private enum Kind { IDENT, NUMBER, STRING, PUNCT, END }

    private record Token(Kind kind, String text, int line) {
        boolean is(String punct) {
            return kind == Kind.PUNCT && text.equals(punct);
        }

        String shown() {
            return switch (kind) {
                case END -> "the end of the file";
                case STRING -> Quoted.of(text, '"');
                default -> Quoted.of(text);
            };
        }
    }

    private final String text;
    private final String source;
    private final List<RawEntry> entries = new ArrayList<>();
    private int pos;
    private int line = 1;
    private Token lookahead;

    private PrototxtReader(String text, String source) {
        this.text = text;
        this.source = source;
    }

    static List<RawEntry> read(String text, String source) {
        PrototxtReader reader = new PrototxtReader(text, source);
        reader.readMessage("", null);
        return reader.entries;
    }

    /** Reads fields until the closing bracket of the block opened by {@code opener} (or the end of file). */
    private void readMessage(String prefix, Token opener) {
        String close = opener == null ? null : opener.is("<") ? ">" : "}";
        while (true) {
            Token token = next();
            if (token.kind == Kind.END) {
                if (opener != null) {
                    throw error(token.line, "the block " + Quoted.of(prefix + " " + opener.text) + " opened at line " + opener.line
                            + " is never closed (expected '" + close + "')");
                }
                return;
            }
            if (close != null && token.is(close)) {
                return;
            }
            if (token.kind != Kind.IDENT) {
                throw error(token.line, "expected a key, found " + token.shown()
                        + (token.is("}") || token.is(">") ? " with no block open" : ""));
            }
            readField(prefix.isEmpty() ? token.text : prefix + "." + token.text, token);
            Token separator = peek();
            if (separator.is(";") || separator.is(",")) {
                next();
            }
        }
    }

    private void readField(String key, Token keyToken) {
        Token after = next();
        boolean colon = after.is(":");
        Token start = colon ? peek() : after;
        if (start.is("{") || start.is("<")) {
            if (colon) {
                next();
            }
            entries.add(new RawEntry(key, new RawValue.Block(), keyToken.line, true));
            readMessage(key, start);
            return;
        }
        if (!colon) {
            throw error(after.line, "expected ':' or '{' after " + Quoted.of(keyToken.text) + ", found " + after.shown());
        }
        Token value = next();
        RawValue raw = value.is("[") ? readList(keyToken) : scalar(value, keyToken);
        entries.add(new RawEntry(key, raw, keyToken.line, true));
    }

    private RawValue readList(Token keyToken) {
        List<RawValue> items = new ArrayList<>();
        if (peek().is("]")) {
            next();
            return new RawValue.ListOf(List.of());
        }
        while (true) {
            items.add(scalar(next(), keyToken));
            Token after = next();
            if (after.is("]")) {
                return new RawValue.ListOf(List.copyOf(items));
            }
            if (!after.is(",")) {
                throw error(after.line, "expected ',' or ']' in the list of " + Quoted.of(keyToken.text) + ", found " + after.shown());
            }
        }
    }

    private RawValue scalar(Token value, Token keyToken) {
        return switch (value.kind) {
            case NUMBER -> new RawValue.Number(value.text,
                    value.text.chars().noneMatch(c -> c == '.' || c == 'e' || c == 'E' || c == 'f' || c == 'F'));
            case IDENT -> new RawValue.Text(value.text, false);
            case STRING -> {
                StringBuilder joined = new StringBuilder(value.text);
                while (peek().kind == Kind.STRING) {
                    joined.append(next().text);
                }
                yield new RawValue.Text(joined.toString(), true);
            }
            default -> throw error(value.line, "expected a value after " + Quoted.of(keyToken.text + ":") + ", found " + value.shown());
        };
    }

    private Token peek() {
        if (lookahead == null) {
            lookahead = scan();
        }
        return lookahead;
    }

    private Token next() {
        Token token = peek();
        lookahead = null;
        return token;
    }

    private Token scan() {
        skipSpaceAndComments();
        if (pos >= text.length()) {
            return new Token(Kind.END, "", line);
        }
        char c = text.charAt(pos);
        if (Character.isLetter(c) || c == '_') {
            int start = pos;
            while (pos < text.length() && (Character.isLetterOrDigit(text.charAt(pos)) || text.charAt(pos) == '_')) {
                pos++;
            }
            return new Token(Kind.IDENT, text.substring(start, pos), line);
        }
        if (Character.isDigit(c) || c == '-' || c == '+' || c == '.') {
            return number();
        }
        if (c == '"' || c == '\'') {
            return string(c);
        }
        if (":{}<>[],;=".indexOf(c) >= 0) {
            pos++;
            return new Token(Kind.PUNCT, String.valueOf(c), line);
        }
        throw error(line, "unexpected character " + Quoted.of(String.valueOf(c)));
    }

    private Token number() {
        int start = pos;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            boolean exponentSign = (c == '-' || c == '+') && pos > start
                    && (text.charAt(pos - 1) == 'e' || text.charAt(pos - 1) == 'E');
            if (Character.isLetterOrDigit(c) || c == '.' || exponentSign || pos == start) {
                pos++;
            } else {
                break;
            }
        }
        String number = text.substring(start, pos);
        if (!NUMBER.matcher(number).matches()) {
            throw error(line, "malformed number " + Quoted.of(number));
        }
        return new Token(Kind.NUMBER, number, line);
    }

    private Token string(char quote) {
        int startLine = line;
        StringBuilder out = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= text.length() || text.charAt(pos) == '\n') {
                throw error(startLine, "unterminated string (a string must close on the line it starts)");
            }
            char c = text.charAt(pos++);
            if (c == quote) {
                return new Token(Kind.STRING, out.toString(), startLine);
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error(startLine, "unterminated string (it ends with a lone backslash)");
            }
            char escaped = text.charAt(pos++);
            out.append(switch (escaped) {
                case 'n' -> '\n';
                case 't' -> '\t';
                case 'r' -> '\r';
                case '\\', '"', '\'' -> escaped;
                default -> throw error(line, "unknown escape " + Quoted.of("\\" + escaped) + " in a string (known: \\n \\t \\r \\\\ \\\" \\')");
            });
        }
    }

    private void skipSpaceAndComments() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '\n') {
                line++;
                pos++;
            } else if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '#') {
                while (pos < text.length() && text.charAt(pos) != '\n') {
                    pos++;
                }
            } else {
                return;
            }
        }
    }

    private StrategyException error(int atLine, String message) {
        return new StrategyException(source + ":" + atLine + ": syntax error: " + message);
    }
}
