package org.fleet4j.fleet.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Ring ids far above any a Fleet opens, so tests that open a Fleet in this JVM never meet them. */
class RingsTest {
    @Test
    void aRingThisRankIsNotAMemberOfIsSkippableAndNamedWhenAskedFor() {
        Rings.putNotMember(901, "the node leaders [0, 2]");
        try {
            assertFalse(Rings.isMember(901));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> Rings.get(901));
            assertEquals("this rank is not a member of ring_id 901 (the node leaders [0, 2]); only its members run"
                    + " collectives on it", e.getMessage());
            IllegalStateException taken = assertThrows(IllegalStateException.class,
                    () -> Rings.putNotMember(901, "again"));
            assertTrue(taken.getMessage().startsWith("ring_id 901 is already taken"), taken.getMessage());
        } finally {
            Rings.removeNotMember(901);
        }
        IllegalStateException none = assertThrows(IllegalStateException.class, () -> Rings.isMember(901));
        assertTrue(none.getMessage().startsWith("no process group at ring_id 901"), none.getMessage());
        assertTrue(none.getMessage().endsWith("Pipeline.forStrategy(fleet.strategy(), fleet.ringLayout()): with"
                + " FLEET_HIERARCHICAL_FORM=reduce it opens no cross rings for the reduce-scatter form"), none.getMessage());
    }
}
