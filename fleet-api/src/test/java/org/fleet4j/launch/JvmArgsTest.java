package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class JvmArgsTest {
    @Test
    void splitsOnWhitespaceAndKeepsQuotedSpaces() {
        assertEquals(List.of("-Xmx8g", "-Dname=a b", "-Dq=it's", "-Dempty=", "x y"),
                JvmArgs.split("  -Xmx8g\t-Dname='a b'  -Dq=\"it's\" -Dempty=\"\" x\\ y "));
    }

    @Test
    void nothingGivenIsNoArguments() {
        assertEquals(List.of(), JvmArgs.split(null));
        assertEquals(List.of(), JvmArgs.split("   "));
        assertEquals(List.of(""), JvmArgs.split("''"));
    }

    @Test
    void unclosedQuoteNamesTheOption() {
        LaunchException e = assertThrows(LaunchException.class, () -> JvmArgs.split("-Da='b"));
        assertEquals("--jvm_args '-Da='b': the quote ' is never closed", e.getMessage());
    }
}
