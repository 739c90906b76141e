package org.fleet4j.collective.group;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.fleet4j.collective.Backend;

/**
 * The host backend a group opens with, and why: the one the options name, or for "auto" the available registered
 * provider of the highest priority for the group's locality. {@code considered} holds every provider's answer, for the
 * dry run ("shm: all 2 ranks on one host (priority 30); tcp: ... (priority 10)").
 */
public record BackendChoice(Backend backend, String reason, List<String> considered) {
    /** The choice for a group of {@code locality} when the options ask for {@code asked} (AUTO or a name). */
    public static BackendChoice of(Backend asked, Locality locality) {
        List<String> considered = new ArrayList<>();
        BackendProvider best = null;
        Suitability bestSuits = null;
        for (BackendProvider p : Backends.hostProviders().stream()
                .sorted(Comparator.comparing(p -> p.backend().name())).toList()) {
            Suitability s = p.suitability(locality);
            considered.add(p.backend() + ": " + s.reason() + (s.available() ? " (priority " + s.priority() + ")"
                    : " (not available)"));
            if (s.available() && (bestSuits == null || s.priority() > bestSuits.priority())) {
                best = p;
                bestSuits = s;
            }
        }
        if (!asked.equals(Backend.AUTO)) {
            BackendProvider named = Backends.host(asked);
            return new BackendChoice(named.backend(), "asked for by name; " + named.suitability(locality).reason(),
                    considered);
        }
        if (best == null) {
            throw new IllegalStateException("no registered host backend can run " + locality + ": "
                    + String.join("; ", considered));
        }
        return new BackendChoice(best.backend(), bestSuits.reason(), considered);
    }

    @Override
    public String toString() {
        return backend + " (" + reason + ")";
    }
}
