package org.fleet4j.pserver.table;

import java.util.Locale;

/**
 * Which ids of a sparse table get a row. Until an id is admitted a pull of it returns the row the table's initializer
 * would create for it (a function of seed, id and column, so admission later creates that very row), and its
 * gradients are dropped. A sighting is an id in a pull: one per worker and step that reads it.
 *
 * <p>The filters are DeepRec's EmbeddingVariable ones ({@code tf.CounterFilter(filter_freq)},
 * {@code tf.CBFFilter(filter_freq, max_element_size, false_positive_probability)}) and Paddle's probabilistic one
 * ({@code CtrCommonAccessor::CreateValue} admits a new feature at its push with probability equal to its show/click
 * score when that score lies in (0, 1)).
 */
public sealed interface RowAdmission {
    /** What {@code --dry_run} and the server's log say of it. */
    String describe();

    /** Every id gets a row at its first sighting. */
    record Everyone() implements RowAdmission {
        @Override
        public String describe() {
            return "every id";
        }
    }

    /**
     * An id gets a row at its {@code filterFreq}-th sighting; its count is exact, kept in the table's hash index
     * until then (12 bytes an id and its share of the index's slack), as DeepRec's counter filter keeps its metadata
     * for ids not yet admitted.
     */
    record Counter(int filterFreq) implements RowAdmission {
        public Counter {
            if (filterFreq < 1) {
                throw new IllegalArgumentException("a counter filter needs filter_freq >= 1, got " + filterFreq);
            }
        }

        @Override
        public String describe() {
            return "counter filter: a row at an id's " + ordinal(filterFreq) + " sighting";
        }
    }

    /**
     * Each sighting of an id without a row admits it with probability {@code probability}, drawn from a generator of
     * each stripe's own (seeded, so a scripted stream of requests admits the same ids every run); nothing is kept for
     * ids not admitted.
     */
    record Probability(double probability) implements RowAdmission {
        public Probability {
            if (!(probability > 0 && probability <= 1)) {
                throw new IllegalArgumentException("admit_probability must be in (0, 1], got " + probability);
            }
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "probability filter: each sighting admits with probability %s",
                    probability);
        }
    }

    /**
     * As {@link Counter}, but the counts live in a counting Bloom filter of 8-bit saturating counters sized for
     * {@code maxElementSize} distinct ids (the whole table's: each of S servers sizes its share for 1/S of them) at a
     * false-positive probability of {@code falsePositiveProbability}: {@code m = -n ln p / (ln 2)^2} counters and
     * {@code k = (m / n) ln 2} hashes, the standard sizing. Its memory is fixed whatever the ids; an id may be admitted
     * early when other ids share all its counters (a false positive), never late.
     */
    record CountingBloom(int filterFreq, long maxElementSize, double falsePositiveProbability) implements RowAdmission {
        public CountingBloom {
            if (filterFreq < 1 || filterFreq > 255) {
                throw new IllegalArgumentException("a counting Bloom filter needs filter_freq in 1..255 (its counters"
                        + " have 8 bits), got " + filterFreq);
            }
            if (maxElementSize < 1) {
                throw new IllegalArgumentException("max_element_size must be at least 1, got " + maxElementSize);
            }
            if (!(falsePositiveProbability > 0 && falsePositiveProbability < 1)) {
                throw new IllegalArgumentException("false_positive_probability must be in (0, 1), got "
                        + falsePositiveProbability);
            }
        }

        /** Counters on one of {@code servers} servers. */
        public long counters(int servers) {
            double n = Math.ceil((double) maxElementSize / servers);
            return Math.max(64, (long) Math.ceil(-n * Math.log(falsePositiveProbability) / (Math.log(2) * Math.log(2))));
        }

        /** Hashes per id. */
        public int hashes() {
            double perElement = -Math.log(falsePositiveProbability) / (Math.log(2) * Math.log(2));
            return (int) Math.max(1, Math.min(16, Math.round(perElement * Math.log(2))));
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "counting Bloom filter: a row at an id's %s sighting, counters sized"
                    + " for %,d ids at false-positive probability %s", ordinal(filterFreq), maxElementSize,
                    falsePositiveProbability);
        }
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th" : switch (n % 10) {
            case 1 -> "st";
            case 2 -> "nd";
            case 3 -> "rd";
            default -> "th";
        };
        return n + suffix;
    }
}
