package org.fleet4j.launch;

import java.util.Locale;

/** {@code --log_level}: how much the launcher says, passed on to the ranks as FLEET_LOG_LEVEL. */
public enum LogLevel {
    DEBUG, INFO, WARN;

    /** The spelling users write and the ranks receive: "debug", "info", "warn". */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean shows(LogLevel message) {
        return message.ordinal() >= ordinal();
    }
}
