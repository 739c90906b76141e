package org.fleet4j.core.io;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * How {@link Parameters#load} matches a weights file to a model.
 *
 * @param strict         a model weight the file lacks, or a file tensor no weight takes, fails the load (PyTorch's
 *                       {@code load_state_dict(strict=True)}); when false they are skipped and reported
 * @param allowNonFinite NaN and infinite values are loaded instead of refused
 * @param nameMap        the model's name for each name in the file ({@code theirs -> ours}); null drops the tensor
 */
public record ParameterLoadOptions(boolean strict, boolean allowNonFinite, UnaryOperator<String> nameMap) {
    /** Every weight present under its own name, no extra tensors, every value finite. */
    public static final ParameterLoadOptions STRICT = new ParameterLoadOptions(true, false, UnaryOperator.identity());

    public ParameterLoadOptions {
        Objects.requireNonNull(nameMap, "nameMap");
    }

    /** These options, skipping and reporting missing and unexpected names instead of failing. */
    public ParameterLoadOptions nonStrict() {
        return new ParameterLoadOptions(false, allowNonFinite, nameMap);
    }

    /** These options, loading NaN and infinite values too. */
    public ParameterLoadOptions allowingNonFinite() {
        return new ParameterLoadOptions(strict, true, nameMap);
    }

    /** These options, renaming each file tensor with {@code theirsToOurs}. */
    public ParameterLoadOptions withNameMap(UnaryOperator<String> theirsToOurs) {
        return new ParameterLoadOptions(strict, allowNonFinite, theirsToOurs);
    }

    /** These options, renaming the file tensors that {@code theirsToOurs} names; the others keep their names. */
    public ParameterLoadOptions withNameMap(Map<String, String> theirsToOurs) {
        Map<String, String> copy = Map.copyOf(theirsToOurs);
        return withNameMap(n -> copy.getOrDefault(n, n));
    }

    /** These options, renaming with a file of {@code theirs=ours} lines (see {@link NameMapFile}). */
    public ParameterLoadOptions withNameMap(Path nameMapFile) {
        return withNameMap(NameMapFile.read(nameMapFile));
    }
}
