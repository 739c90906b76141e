package org.fleet4j.collective.group;

/**
 * What a backend says of a group's {@link Locality}: whether it can run the group there and how much it is preferred
 * (a higher priority wins the "auto" choice), with the reason in words for the dry run and the log.
 */
public record Suitability(boolean available, int priority, String reason) {
    public static Suitability available(int priority, String reason) {
        return new Suitability(true, priority, reason);
    }

    public static Suitability unavailable(String reason) {
        return new Suitability(false, Integer.MIN_VALUE, reason);
    }
}
