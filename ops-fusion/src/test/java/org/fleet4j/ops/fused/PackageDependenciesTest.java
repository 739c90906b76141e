package org.fleet4j.ops.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages of ops-fusion, read from their sources: the fused ops stand below the passes that insert them, and no
 * two packages of the module reach each other.
 */
class PackageDependenciesTest {
    private static final Path SOURCES = Path.of("src/main/java");
    private static final String COMPILER = "org.fleet4j.compiler";
    private static final String FUSED = "org.fleet4j.ops.fused";

    @Test
    void fusedOpsNameNoPass() throws IOException {
        Map<String, Set<String>> deps = dependencies();
        assertFalse(deps.get(FUSED).contains(COMPILER), FUSED + " must not name " + COMPILER + ": the passes use the ops,"
                + " not the other way round");
        assertTrue(deps.get(COMPILER).contains(FUSED), "the scan sees the passes' use of the fused ops");
    }

    @Test
    void noPackageCycle() throws IOException {
        Map<String, Set<String>> deps = dependencies();
        List<String> cycles = new ArrayList<>();
        for (String from : deps.keySet()) {
            for (String to : deps.get(from)) {
                if (reaches(deps, to, from, new TreeSet<>())) {
                    cycles.add(from + " -> " + to + " -> ... -> " + from);
                }
            }
        }
        assertEquals(List.of(), cycles);
    }

    private static boolean reaches(Map<String, Set<String>> deps, String from, String target, Set<String> seen) {
        if (from.equals(target)) {
            return true;
        }
        if (!seen.add(from)) {
            return false;
        }
        for (String next : deps.getOrDefault(from, Set.of())) {
            if (reaches(deps, next, target, seen)) {
                return true;
            }
        }
        return false;
    }

    /** Each package of the module and the other packages of the module whose classes its code names. */
    private static Map<String, Set<String>> dependencies() throws IOException {
        Map<String, List<Path>> packages = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                packages.computeIfAbsent(SOURCES.relativize(f.getParent()).toString().replace('/', '.'), k -> new ArrayList<>())
                        .add(f);
            }
        }
        Map<String, Set<String>> deps = new TreeMap<>();
        for (Map.Entry<String, List<Path>> p : packages.entrySet()) {
            Set<String> named = new TreeSet<>();
            for (Path f : p.getValue()) {
                for (String line : Files.readAllLines(f)) {
                    String code = line.strip();
                    if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*") || code.startsWith("package ")) {
                        continue; // prose may name them
                    }
                    for (String other : packages.keySet()) {
                        if (!other.equals(p.getKey()) && Pattern.compile("\\b" + Pattern.quote(other) + "\\.[A-Z*]").matcher(code).find()) {
                            named.add(other);
                        }
                    }
                }
            }
            deps.put(p.getKey(), named);
        }
        return deps;
    }
}
