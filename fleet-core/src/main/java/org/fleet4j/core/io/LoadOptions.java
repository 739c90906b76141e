package org.fleet4j.core.io;

/**
 * How {@link SafeTensors#loadInto} treats a checkpoint that does not match its targets exactly.
 *
 * @param strict         a variable the file lacks, or one no target names, fails the load (else it is reported)
 * @param allowNonFinite NaN or infinite values are loaded, to inspect a checkpoint of a diverged training; by default
 *                       such a checkpoint is refused, naming the tensor and its first bad element
 */
public record LoadOptions(boolean strict, boolean allowNonFinite) {
    /** Every variable present and matching, every value finite. */
    public static final LoadOptions STRICT = new LoadOptions(true, false);
    /** Missing and unexpected variables reported, not refused; every value finite. */
    public static final LoadOptions LENIENT = new LoadOptions(false, false);

    /** These options, loading NaN and infinite values too. */
    public LoadOptions allowingNonFinite() {
        return new LoadOptions(strict, true);
    }
}
