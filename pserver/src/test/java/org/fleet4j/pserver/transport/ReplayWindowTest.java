package org.fleet4j.pserver.transport;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReplayWindowTest {
    @Test
    void eachSequenceIsAcceptedOnceEvenOutOfOrder() {
        ReplayWindow w = new ReplayWindow();
        assertTrue(w.accept(0));
        assertFalse(w.accept(0), "a repeat");
        assertTrue(w.accept(5));
        assertTrue(w.accept(3), "late but new");
        assertFalse(w.accept(3));
        assertFalse(w.accept(5));
        assertTrue(w.accept(4));
        assertFalse(w.accept(-1), "negative");
    }

    @Test
    void sequencesOlderThanTheWindowAreRefusedAndSlotsAreReused() {
        ReplayWindow w = new ReplayWindow();
        assertTrue(w.accept(1));
        assertTrue(w.accept(1 + ReplayWindow.SIZE), "a later call in the slot of 1");
        assertFalse(w.accept(1), "too old to tell: refused");
        assertTrue(w.accept(2), "still inside the window and never seen");
        assertTrue(w.accept(10 * ReplayWindow.SIZE + 2), "a jump past the window");
        assertFalse(w.accept(9 * ReplayWindow.SIZE + 2), "now too old");
        assertTrue(w.accept(10 * ReplayWindow.SIZE + 1), "inside the new window");
    }
}
