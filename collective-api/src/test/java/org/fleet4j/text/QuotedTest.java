package org.fleet4j.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class QuotedTest {
    @Test
    void shortPrintableInputIsQuotedWhole() {
        assertEquals("'x12'", Quoted.of("x12"));
        assertEquals("x12", Quoted.bare("x12"));
        assertEquals("'" + "a".repeat(Quoted.LIMIT) + "'", Quoted.of("a".repeat(Quoted.LIMIT)));
        assertEquals("'caf\u00e9 \u4e2d'", Quoted.of("caf\u00e9 \u4e2d"), "printable letters of any script stay");
        assertEquals("null", Quoted.of(null));
    }

    @Test
    void longInputShowsABoundedPrefixAndItsLength() {
        String q = Quoted.of("x".repeat(10_485_760));
        assertEquals("'" + "x".repeat(Quoted.LIMIT - 3) + "...' (10485760 characters)", q);
        assertEquals("x".repeat(Quoted.LIMIT - 3) + "... (81 characters)", Quoted.bare("x".repeat(81)));
    }

    @Test
    void controlCharactersAreEscapedAndCountTowardsTheBound() {
        assertEquals("'\\x1b[31mred\\x07\\n\\t\\0\\x7f\\x9b'", Quoted.of("\u001b[31mred\u0007\n\t\u0000\u007f\u009b"));
        assertEquals("'\\u202egnp.exe'", Quoted.of("\u202egnp.exe"), "a bidi override would reorder the line");
        String q = Quoted.of("\u001b".repeat(1000));
        assertTrue(q.length() < 120, q);
        assertTrue(q.chars().allMatch(c -> c >= 0x20 && c < 0x7f), q);
        assertTrue(q.endsWith("...' (1000 characters)"), q);
    }

    @Test
    void aSurrogatePairIsNeverSplit() {
        String emoji = "\ud83d\ude00";
        String q = Quoted.of("a".repeat(Quoted.LIMIT - 4) + emoji + "tail");
        assertTrue(q.startsWith("'" + "a".repeat(Quoted.LIMIT - 4) + "...'"), q);
        assertEquals("'\\ud83d'", Quoted.of("\ud83d"), "a lone surrogate is escaped");
    }

    @Test
    void anotherLibrarysMessageHasItsLongQuotesShortenedAndIsBounded() {
        String v = "9".repeat(1_000_000);
        String m = Quoted.message("Invalid value for option '--epochs': '" + v + "' is not an int");
        assertEquals("Invalid value for option '--epochs': '" + "9".repeat(Quoted.LIMIT - 3)
                + "...' (1000000 characters) is not an int", m);
        assertEquals("Unrecognized token 'x\\x1b': was expecting \"null\"",
                Quoted.message("Unrecognized token 'x\u001b': was expecting \"null\""));
        String prose = "rank 0's share " + "of the rows ".repeat(10) + "ends at 'x'";
        assertEquals(prose, Quoted.message(prose), "an apostrophe inside a word opens no quote");
        String unquoted = Quoted.message("For input string: " + v);
        assertTrue(unquoted.length() < Quoted.MESSAGE_LIMIT + 40, unquoted);
        assertTrue(unquoted.endsWith("... (1000018 characters)"), unquoted);
    }
}
