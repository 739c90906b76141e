package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ExecContextTest {
    record Group(String name) {
    }

    @Test
    void givesEachRingsGroupAndTellsMembersFromNonMembers() {
        Group g0 = new Group("default");
        ExecContext ctx = ExecContext.builder().ring(0, g0).notMember(4, "the node leaders [0, 2]").build();
        assertSame(g0, ctx.ring(0, Group.class));
        assertTrue(ctx.isMember(0));
        assertFalse(ctx.isMember(4));
        assertEquals(Optional.of(g0), ctx.memberRing(0, Group.class));
        assertEquals(Optional.empty(), ctx.memberRing(4, Group.class));
        assertEquals(Optional.empty(), ctx.memberRing(7, Group.class));
        String notMember = assertThrows(IllegalStateException.class, () -> ctx.ring(4, Group.class)).getMessage();
        assertEquals("this rank is not a member of ring_id 4 (the node leaders [0, 2]); only its members run"
                + " collectives on it", notMember);
        String wrongType = assertThrows(IllegalStateException.class, () -> ctx.ring(0, String.class)).getMessage();
        assertTrue(wrongType.contains("ring_id 0 holds a") && wrongType.contains("not a java.lang.String"), wrongType);
    }

    @Test
    void aRingTheContextLacksIsNamedWithItsRingsAndWhatToDo() {
        ExecContext ctx = ExecContext.builder().ring(0, new Group("g")).notMember(2, "leaders")
                .missingRingHint("open it with Fleet.init").build();
        String msg = assertThrows(IllegalStateException.class, () -> ctx.isMember(3)).getMessage();
        assertEquals("no process group at ring_id 3 (rings: [0, 2]); open it with Fleet.init", msg);
        String none = assertThrows(IllegalStateException.class, () -> ExecContext.none().ring(0, Group.class)).getMessage();
        assertTrue(none.contains("without the context of a job") && none.contains("Fleet.execContext()"), none);
    }

    @Test
    void aRingIdIsGivenOnceAndServicesAreFoundByType() {
        ExecContext.Builder b = ExecContext.builder().ring(1, new Group("a"));
        String msg = assertThrows(IllegalArgumentException.class, () -> b.notMember(1, "x")).getMessage();
        assertEquals("ring_id 1 is given twice to one execution context", msg);
        ExecContext ctx = ExecContext.builder().service(CharSequence.class, "client").build();
        assertEquals(Optional.of("client"), ctx.service(CharSequence.class));
        assertEquals(Optional.empty(), ctx.service(Group.class));
        assertSame(BufferPlacements.NONE, ExecContext.none().placements());
    }
}
