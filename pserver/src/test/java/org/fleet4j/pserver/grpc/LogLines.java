package org.fleet4j.pserver.grpc;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The messages one class logs (System.Logger goes to java.util.logging) while this is open. */
public final class LogLines extends Handler implements AutoCloseable {
    private final Logger logger;
    private final List<String> messages = new CopyOnWriteArrayList<>();

    public LogLines(Class<?> loggingClass) {
        logger = Logger.getLogger(loggingClass.getName());
        logger.addHandler(this);
    }

    /** What was logged so far, oldest first. */
    public List<String> messages() {
        return List.copyOf(messages);
    }

    @Override
    public void publish(LogRecord record) {
        messages.add(record.getMessage());
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
