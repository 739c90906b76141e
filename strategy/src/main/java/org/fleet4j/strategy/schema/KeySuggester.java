package org.fleet4j.strategy.schema;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/** Finds the valid name closest to a misspelt one, for "did you mean ...?" hints. */
final class KeySuggester {
    private KeySuggester() {
    }

    /** The closest candidate, if it is close enough to be a plausible typo (case is ignored). */
    static Optional<String> nearest(String given, Collection<String> candidates) {
        String lower = given.toLowerCase(Locale.ROOT);
        int tolerance = Math.max(2, given.length() / 3);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates) {
            String other = candidate.toLowerCase(Locale.ROOT);
            if (Math.abs(other.length() - lower.length()) > tolerance && !other.startsWith(lower)) {
                continue; // the distance is at least the difference in length: a 1 MB key costs nothing
            }
            // A truncated key ("nccl_comm") is plausible, though less so than a one-letter typo.
            int d = lower.length() >= 4 && other.startsWith(lower) ? Math.min(2, distance(lower, other)) : distance(lower, other);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return bestDistance <= tolerance ? Optional.ofNullable(best) : Optional.empty();
    }

    /** Levenshtein distance: insertions, deletions and substitutions. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
