package org.fleet4j.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The first few warnings of each interval are written, the rest counted and the count written later. */
class RateLimitedLogTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aFloodWritesTheFirstFewThenACountPerInterval() {
        Captured log = new Captured();
        AtomicLong now = new AtomicLong(42 * SECOND);
        RateLimitedLog limited = new RateLimitedLog(log, 3, 10 * SECOND, now::get);
        for (int i = 0; i < 400; i++) {
            limited.warn("rejected " + i);
            now.addAndGet(SECOND / 100);
        }
        // 400 warnings over 4 s: one interval, so three lines and nothing else yet
        assertEquals(List.of("rejected 0", "rejected 1", "rejected 2"), log.lines);
        now.addAndGet(7 * SECOND);
        limited.warn("rejected 400");
        limited.warn("rejected 401");
        assertEquals(List.of("rejected 0", "rejected 1", "rejected 2",
                "397 more warning(s) like the above were not shown in the last 11 s", "rejected 400", "rejected 401"), log.lines);
        now.addAndGet(10 * SECOND);
        limited.warn("rejected 402");
        assertEquals("rejected 402", log.lines.get(log.lines.size() - 1), "a quiet interval owes no count");
        assertEquals(7, log.lines.size());
    }

    @Test
    void aLimitThatWouldHideEverythingIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RateLimitedLog(new Captured(), 0, SECOND, System::nanoTime));
    }

    /** A System.Logger that keeps the warnings it is given. */
    private static final class Captured implements System.Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "captured";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(format);
        }
    }
}
