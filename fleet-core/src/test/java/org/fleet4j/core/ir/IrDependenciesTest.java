package org.fleet4j.core.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

/** The IR stands below the op definitions: it names no class of theirs, and still checks ops through them. */
class IrDependenciesTest {
    /** Packages of fleet-core that build on the IR; the IR may not reach back into them. */
    private static final List<String> ABOVE = List.of("org.fleet4j.core.ops", "org.fleet4j.core.exec",
            "org.fleet4j.core.autodiff", "org.fleet4j.core.layers", "org.fleet4j.core.optim", "org.fleet4j.core.device");

    @Test
    void irSourcesNameNoPackageAboveThem() throws IOException {
        List<String> offending = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("src/main/java/org/fleet4j/core/ir"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i).strip();
                    if (line.startsWith("*") || line.startsWith("//") || line.startsWith("/*")) {
                        continue; // prose may name them
                    }
                    for (String above : ABOVE) {
                        if (line.contains(above + ".")) {
                            offending.add(f.getFileName() + ":" + (i + 1) + ": " + line);
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), offending);
    }

    @Test
    void opsAreStillCheckedAgainstTheirDefinitions() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, 2, 3);
        Op relu = b.appendOp("relu", Map.of("X", List.of("x")), Map.of("Out", List.of("y")), Map.of());
        assertTrue(b.hasVar("y"), "the output var was created with an inferred shape");
        IrException e = org.junit.jupiter.api.Assertions.assertThrows(IrException.class,
                () -> b.appendOp("no_such_op", Map.of(), Map.of(), Map.of()));
        assertTrue(e.getMessage().contains("unknown op type 'no_such_op'"), e.getMessage());
        assertFalse(relu.type().isEmpty());
    }
}
