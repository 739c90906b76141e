package org.fleet4j.cluster;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Counts the warnings one class logs (System.Logger goes to java.util.logging) while it is open. */
public final class WarningCounter extends Handler implements AutoCloseable {
    private final Logger logger;
    private final AtomicInteger warnings = new AtomicInteger();

    public WarningCounter(Class<?> loggingClass) {
        logger = Logger.getLogger(loggingClass.getName());
        logger.addHandler(this);
    }

    public int count() {
        return warnings.get();
    }

    @Override
    public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
            warnings.incrementAndGet();
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
