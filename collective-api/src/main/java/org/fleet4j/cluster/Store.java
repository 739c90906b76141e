package org.fleet4j.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** Rendezvous key-value store shared by all ranks of a job: endpoints, the job token, NCCL unique ids. */
public interface Store extends AutoCloseable {
    void set(String key, byte[] value);

    /** The value of {@code key}, waiting up to {@code timeout} for some rank to set it. */
    byte[] get(String key, Duration timeout);

    /** Waits until every key is set; the error names the keys still missing at the timeout. */
    void waitFor(List<String> keys, Duration timeout);

    /** Atomically adds {@code delta} to a counter (absent counts as 0) and returns the new value. */
    long add(String key, long delta);

    /**
     * Sets {@code key} to {@code desired} if its current value equals {@code expected} (null: the key is absent).
     * Returns the value after the call, so the caller can see whether it won.
     */
    byte[] compareAndSet(String key, byte[] expected, byte[] desired);

    @Override
    void close();

    default void setString(String key, String value) {
        set(key, value.getBytes(StandardCharsets.UTF_8));
    }

    default String getString(String key, Duration timeout) {
        return new String(get(key, timeout), StandardCharsets.UTF_8);
    }
}
