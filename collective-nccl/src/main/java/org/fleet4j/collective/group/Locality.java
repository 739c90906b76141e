package org.fleet4j.collective.group;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Where the ranks of a group live: one host key per rank (equal keys = the same machine). */
public record Locality(List<String> hostOfRank) {
    public Locality {
        hostOfRank = List.copyOf(hostOfRank);
    }

    public static Locality of(String... hostOfRank) {
        return new Locality(Arrays.asList(hostOfRank));
    }

    public int ranks() {
        return hostOfRank.size();
    }

    public int hosts() {
        return (int) hostOfRank.stream().distinct().count();
    }

    public boolean allOnOneHost() {
        return hosts() == 1;
    }

    /** Whether every host holds more than one rank of the group. */
    public boolean everyHostHasPeers() {
        Map<String, Integer> perHost = new HashMap<>();
        hostOfRank.forEach(h -> perHost.merge(h, 1, Integer::sum));
        return perHost.values().stream().allMatch(c -> c > 1);
    }

    @Override
    public String toString() {
        return ranks() + (ranks() == 1 ? " rank" : " ranks") + " on " + hosts() + (hosts() == 1 ? " host" : " hosts");
    }
}
