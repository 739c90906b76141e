package org.fleet4j.launch;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * A rank's output on its way to the console: every line prefixed with the rank, minus the JVM's warning about the
 * Vector API, which every rank prints because the launcher adds that module (it stays in the rank's log).
 */
final class ConsoleEcho {
    static final byte[] INCUBATOR_WARNING = "WARNING: Using incubator modules: jdk.incubator.vector".getBytes(StandardCharsets.UTF_8);
    private static final int MID_LINE = -1;

    private final PrintStream console;
    private final byte[] prefix;
    /** At a line start: how many bytes of the line are held back because they match the warning so far; MID_LINE after the prefix went out. */
    private int held;

    ConsoleEcho(PrintStream console, String prefix) {
        this.console = console;
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    /** Echoes the next bytes of the rank's output; a line that may still turn out to be the warning waits for its next bytes. */
    void write(byte[] bytes, int length) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(length + prefix.length);
        for (int i = 0; i < length; i++) {
            byte b = bytes[i];
            if (held >= 0) {
                if (held < INCUBATOR_WARNING.length && b == INCUBATOR_WARNING[held]) {
                    held++;
                    continue;
                }
                if (held == INCUBATOR_WARNING.length && b == '\n') {
                    held = 0;
                    continue;
                }
                if (held == 0 && b == '\n') {
                    out.write(b);
                    continue;
                }
                out.writeBytes(prefix);
                out.write(INCUBATOR_WARNING, 0, held);
                held = MID_LINE;
            }
            out.write(b);
            // A carriage return starts the line again (progress bars redraw in place), so the prefix comes back.
            if (b == '\n' || b == '\r') {
                held = 0;
            }
        }
        emit(out);
    }

    /** The rank closed its output: what was held back of an unfinished last line goes out after all. */
    void finish() {
        if (held > 0) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(prefix);
            out.write(INCUBATOR_WARNING, 0, held);
            held = MID_LINE;
            emit(out);
        }
    }

    private void emit(ByteArrayOutputStream out) {
        synchronized (console) {
            console.write(out.toByteArray(), 0, out.size());
            console.flush();
        }
    }
}
