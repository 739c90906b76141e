package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.Optional;
import org.fleet4j.collective.ProcessGroup;
import org.junit.jupiter.api.Test;

class ExecContextTest {
    /** A stand-in group that only has a name. */
    private static ProcessGroup group(String name) {
        return (ProcessGroup) Proxy.newProxyInstance(ProcessGroup.class.getClassLoader(),
                new Class<?>[]{ProcessGroup.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "name", "toString" -> name;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void givesEachRingsGroupAndTellsMembersFromNonMembers() {
        ProcessGroup g0 = group("default");
        ExecContext ctx = ExecContext.builder().ring(0, g0).notMember(4, "the node leaders [0, 2]").build();
        assertSame(g0, ctx.ring(0));
        assertTrue(ctx.isMember(0));
        assertFalse(ctx.isMember(4));
        assertEquals(Optional.of(g0), ctx.memberRing(0));
        assertEquals(Optional.empty(), ctx.memberRing(4));
        assertEquals(Optional.empty(), ctx.memberRing(7));
        String notMember = assertThrows(IllegalStateException.class, () -> ctx.ring(4)).getMessage();
        assertEquals("this rank is not a member of ring_id 4 (the node leaders [0, 2]); only its members run"
                + " collectives on it", notMember);
    }

    @Test
    void aRingTheContextLacksIsNamedWithItsRingsAndWhatToDo() {
        ExecContext ctx = ExecContext.builder().ring(0, group("g")).notMember(2, "leaders")
                .missingRingHint("open it with Fleet.init").build();
        String msg = assertThrows(IllegalStateException.class, () -> ctx.isMember(3)).getMessage();
        assertEquals("no process group at ring_id 3 (rings: [0, 2]); open it with Fleet.init", msg);
        String none = assertThrows(IllegalStateException.class, () -> ExecContext.none().ring(0)).getMessage();
        assertTrue(none.contains("without the context of a job") && none.contains("Fleet.execContext()"), none);
    }

    @Test
    void aRingIdIsGivenOnceAndServicesAreFoundByType() {
        ExecContext.Builder b = ExecContext.builder().ring(1, group("a"));
        String msg = assertThrows(IllegalArgumentException.class, () -> b.notMember(1, "x")).getMessage();
        assertEquals("ring_id 1 is given twice to one execution context", msg);
        ExecContext ctx = ExecContext.builder().service(CharSequence.class, "client").build();
        assertEquals(Optional.of("client"), ctx.service(CharSequence.class));
        assertEquals(Optional.empty(), ctx.service(ProcessGroup.class));
        assertSame(BufferPlacements.NONE, ExecContext.none().placements());
    }
}
