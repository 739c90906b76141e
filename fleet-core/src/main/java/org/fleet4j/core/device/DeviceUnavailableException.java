package org.fleet4j.core.device;

/** A device was asked for that this machine or classpath cannot provide; the message says what to install. */
public final class DeviceUnavailableException extends RuntimeException {
    public DeviceUnavailableException(String message) {
        super(message);
    }

    public DeviceUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
