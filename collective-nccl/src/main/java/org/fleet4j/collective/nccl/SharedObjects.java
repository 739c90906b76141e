package org.fleet4j.collective.nccl;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads which shared object a JavaCPP link error could not open, for messages that say what to install. */
public final class SharedObjects {
    private static final Pattern MISSING = Pattern.compile("(lib[\\w.+-]+\\.so[.\\d]*): cannot open shared object file");

    private SharedObjects() {
    }

    /** The shared object named by the deepest "cannot open shared object file" in the chain, or null. */
    public static String missingIn(Throwable error) {
        String found = null;
        for (Throwable t = error; t != null; t = t.getCause()) {
            Matcher m = MISSING.matcher(String.valueOf(t.getMessage()));
            if (m.find()) {
                found = m.group(1);
            }
            for (Throwable s : t.getSuppressed()) {
                Matcher ms = MISSING.matcher(String.valueOf(s.getMessage()));
                if (found == null && ms.find()) {
                    found = ms.group(1);
                }
            }
        }
        return found;
    }
}
