package org.fleet4j.core.io;

import java.util.List;

/**
 * What {@link SafeTensors#loadInto} did: the variables it filled, the targets the file lacks, and the file's variables
 * that no target asked for. The last two are empty after a strict load.
 */
public record LoadReport(List<String> loaded, List<String> missing, List<String> unexpected) {
    public LoadReport {
        loaded = List.copyOf(loaded);
        missing = List.copyOf(missing);
        unexpected = List.copyOf(unexpected);
    }
}
