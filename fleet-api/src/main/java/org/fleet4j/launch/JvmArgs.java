package org.fleet4j.launch;

import java.util.ArrayList;
import java.util.List;
import org.fleet4j.text.Quoted;

/** Splits {@code --jvm_args "..."} into arguments the way a POSIX shell would split quoted words. */
public final class JvmArgs {
    private JvmArgs() {
    }

    public static List<String> split(String line) {
        List<String> args = new ArrayList<>();
        if (line == null) {
            return args;
        }
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && quote == '"' && i + 1 < line.length() && (line.charAt(i + 1) == '"' || line.charAt(i + 1) == '\\')) {
                    word.append(line.charAt(++i));
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (c == '\\' && i + 1 < line.length()) {
                word.append(line.charAt(++i));
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    args.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (quote != 0) {
            throw new LaunchException("--jvm_args " + Quoted.of(line) + ": the quote " + quote + " is never closed");
        }
        if (inWord) {
            args.add(word.toString());
        }
        return args;
    }
}
