package org.fleet4j.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The module structure docs/ARCHITECTURE.md describes, checked against the build: every module sits in a layer and
 * depends only on layers below it; the picture (docs/architecture.dot, drawn by scripts/docs/architecture.py) has
 * exactly the poms' arrows; no module's packages import each other in a cycle; and no module names a class of a
 * module it does not depend on, in an import, a fully qualified name or a string (a class name in a string is a tie
 * the build cannot see); and every package under a module's src/main/java has a package-info.java whose Javadoc says
 * what lives there.
 */
class ModuleStructureTest {
    /** The layers, lowest first; a module may depend only on modules of a lower layer (docs/ARCHITECTURE.md). */
    static final List<Set<String>> LAYERS = List.of(
            Set.of("collective-api"),
            Set.of("strategy", "fleet-core", "collective-nccl"),
            Set.of("ops-fusion", "pserver", "fleet-gpu"),
            Set.of("fleet-api"),
            Set.of("examples", "benchmarks"),
            Set.of("tests"));

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?([\\w.]+)\\.[\\w*]+;", Pattern.MULTILINE);
    /** A name in the project's namespace: packages, then optionally a class. */
    private static final Pattern PROJECT_NAME = Pattern.compile("org\\.fleet4j(?:\\.[a-z_][a-z0-9_]*)+(?:\\.[A-Z]\\w*)?");
    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/|//[^\n]*", Pattern.DOTALL);
    /** A Javadoc comment with some text in it, then (annotations and) the package declaration. */
    private static final Pattern PACKAGE_JAVADOC = Pattern.compile(
            "/\\*\\*(?:(?!\\*/).)*?[^*\\s/](?:(?!\\*/).)*\\*/" + "\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s*)*package\\s",
            Pattern.DOTALL);
    private static final Pattern DOT_EDGE = Pattern.compile("^\\s*\"([\\w-]+)\" -> \"([\\w-]+)\";", Pattern.MULTILINE);

    @Test
    void everyModuleDependsOnlyOnLowerLayers() throws Exception {
        List<String> wrong = new ArrayList<>();
        Map<String, Set<String>> edges = pomEdges();
        for (String module : edges.keySet()) {
            if (layerOf(module) < 0) {
                wrong.add(module + " is in no layer: place it in ModuleStructureTest.LAYERS and docs/ARCHITECTURE.md");
            }
        }
        edges.forEach((from, tos) -> tos.forEach(to -> {
            if (layerOf(from) >= 0 && layerOf(to) >= layerOf(from)) {
                wrong.add(from + " (layer " + layerOf(from) + ") depends on " + to + " (layer " + layerOf(to) + ")");
            }
        }));
        assertEquals(List.of(), wrong);
    }

    @Test
    void theDiagramHasThePomsArrows() throws Exception {
        Set<String> fromPoms = new TreeSet<>();
        pomEdges().forEach((from, tos) -> tos.forEach(to -> fromPoms.add(from + " -> " + to)));
        Set<String> drawn = new TreeSet<>();
        Matcher m = DOT_EDGE.matcher(Files.readString(ROOT.resolve("docs/architecture.dot")));
        while (m.find()) {
            drawn.add(m.group(1) + " -> " + m.group(2));
        }
        assertEquals(fromPoms, drawn, "docs/architecture.dot is out of date: run scripts/docs/architecture.py");
    }

    @Test
    void noModuleHasAPackageCycle() throws Exception {
        Map<String, List<List<String>>> cycles = new TreeMap<>();
        for (String module : pomEdges().keySet()) {
            List<List<String>> found = packageCycles(packageImports(ROOT.resolve(module).resolve("src/main/java")));
            if (!found.isEmpty()) {
                cycles.put(module, found);
            }
        }
        assertEquals(Map.of(), cycles, "packages that import each other in a cycle, per module");
    }

    @Test
    void noModuleNamesAClassOfAModuleItDoesNotDependOn() throws Exception {
        Map<String, Set<String>> edges = pomEdges();
        Map<String, String> ownerOfPackage = new HashMap<>();
        Map<String, Map<String, String>> sources = new TreeMap<>();
        for (String module : edges.keySet()) {
            Map<String, String> files = mainSources(ROOT.resolve(module).resolve("src/main/java"));
            sources.put(module, files);
            for (String src : files.values()) {
                Matcher p = PACKAGE.matcher(src);
                if (p.find()) {
                    ownerOfPackage.put(p.group(1), module);
                }
            }
        }
        List<String> ties = new ArrayList<>();
        sources.forEach((module, files) -> files.forEach((file, src) -> ties.addAll(
                foreignNames(module, file, src, reachable(module, edges), ownerOfPackage))));
        assertEquals(List.of(), ties, "names of classes in modules the naming module does not depend on");
    }

    @Test
    void aClassNameInAStringOfAnUpperModuleIsFound() {
        String src = "package org.fleet4j.launch;\nclass X {\n  // org.fleet4j.examples.InAComment is prose\n"
                + "  String main = \"org.fleet4j.examples.Mnist\";\n  String own = \"org.fleet4j.launch.Y\";\n}\n";
        Map<String, String> owner = Map.of("org.fleet4j.launch", "fleet-api", "org.fleet4j.examples", "examples");
        assertEquals(List.of("fleet-api X.java:4 names org.fleet4j.examples.Mnist of module examples"),
                foreignNames("fleet-api", "X.java", src, Set.of("fleet-api"), owner));
    }

    /** The names in {@code src} (comments left out) of packages owned by modules outside {@code reachable}. */
    static List<String> foreignNames(String module, String file, String src, Set<String> reachable,
                                     Map<String, String> ownerOfPackage) {
        List<String> found = new ArrayList<>();
        String code = COMMENT.matcher(src).replaceAll(m -> "\n".repeat((int) m.group().chars().filter(c -> c == '\n').count()));
        Matcher m = PROJECT_NAME.matcher(code);
        while (m.find()) {
            String name = m.group();
            String owner = null;
            int longest = -1;
            for (var e : ownerOfPackage.entrySet()) {
                if ((name.equals(e.getKey()) || name.startsWith(e.getKey() + ".")) && e.getKey().length() > longest) {
                    owner = e.getValue();
                    longest = e.getKey().length();
                }
            }
            if (owner != null && !reachable.contains(owner)) {
                int line = (int) code.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
                found.add(module + " " + file + ":" + line + " names " + name + " of module " + owner);
            }
        }
        return found;
    }

    /** The module and every module it depends on, directly or not. */
    private static Set<String> reachable(String module, Map<String, Set<String>> edges) {
        Set<String> seen = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(module));
        while (!todo.isEmpty()) {
            String m = todo.pop();
            if (seen.add(m)) {
                todo.addAll(edges.getOrDefault(m, Set.of()));
            }
        }
        return seen;
    }

    /** File name (relative to {@code sources}) to source text of every main Java file. */
    private static Map<String, String> mainSources(Path sources) throws IOException {
        Map<String, String> files = new TreeMap<>();
        if (!Files.isDirectory(sources)) {
            return files;
        }
        try (Stream<Path> walk = Files.walk(sources)) {
            for (Path f : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
                files.put(sources.relativize(f).toString(), Files.readString(f));
            }
        }
        return files;
    }

    @Test
    void theCycleFinderFindsACycle() {
        Map<String, Set<String>> graph = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        assertEquals(List.of(List.of("a", "b", "c")), packageCycles(graph));
        assertTrue(packageCycles(Map.of("a", Set.of("b"), "b", Set.of())).isEmpty());
    }

    @Test
    void everyPackageHasAPackageInfoWithAJavadocComment() throws Exception {
        Map<String, List<String>> undocumented = new TreeMap<>();
        for (String module : pomEdges().keySet()) {
            List<String> found = undocumentedPackages(mainSources(ROOT.resolve(module).resolve("src/main/java")));
            if (!found.isEmpty()) {
                undocumented.put(module, found);
            }
        }
        assertEquals(Map.of(), undocumented, "packages whose package-info.java is missing or has no Javadoc comment "
                + "(say what lives in the package and what it may touch), per module");
    }

    @Test
    void aPackageWithoutADocumentedPackageInfoIsFound() {
        Map<String, String> files = Map.of(
                "org/x/good/A.java", "package org.x.good;\nclass A {}\n",
                "org/x/good/package-info.java", "// licence\n/**\n * What lives here.\n */\npackage org.x.good;\n",
                "org/x/none/B.java", "package org.x.none;\nclass B {}\n",
                "org/x/plain/C.java", "package org.x.plain;\nclass C {}\n",
                "org/x/plain/package-info.java", "/* not Javadoc */\npackage org.x.plain;\n",
                "org/x/empty/D.java", "package org.x.empty;\nclass D {}\n",
                "org/x/empty/package-info.java", "/** */\npackage org.x.empty;\n",
                "org/x/after/E.java", "package org.x.after;\nclass E {}\n",
                "org/x/after/package-info.java", "package org.x.after;\n/** Too late. */\n");
        assertEquals(List.of(
                        "org.x.after: package-info.java has no Javadoc comment before its package declaration",
                        "org.x.empty: package-info.java has no Javadoc comment before its package declaration",
                        "org.x.none: no package-info.java",
                        "org.x.plain: package-info.java has no Javadoc comment before its package declaration"),
                undocumentedPackages(files));
    }

    /**
     * The packages among {@code files} (path relative to a source root → source text) whose directory has no
     * package-info.java, or one without a non-empty Javadoc comment before its package declaration, sorted.
     */
    static List<String> undocumentedPackages(Map<String, String> files) {
        Set<String> directories = new TreeSet<>();
        for (String file : files.keySet()) {
            if (file.endsWith(".java")) {
                Path parent = Path.of(file).getParent();
                directories.add(parent == null ? "" : parent.toString());
            }
        }
        List<String> found = new ArrayList<>();
        for (String dir : directories) {
            String name = dir.isEmpty() ? "(the default package)" : dir.replace('/', '.').replace('\\', '.');
            String info = files.get(dir.isEmpty() ? "package-info.java" : Path.of(dir, "package-info.java").toString());
            if (info == null) {
                found.add(name + ": no package-info.java");
            } else if (!PACKAGE_JAVADOC.matcher(info).find()) {
                found.add(name + ": package-info.java has no Javadoc comment before its package declaration");
            }
        }
        return found;
    }

    private static int layerOf(String module) {
        for (int i = 0; i < LAYERS.size(); i++) {
            if (LAYERS.get(i).contains(module)) {
                return i;
            }
        }
        return -1;
    }

    /** Module directory → the module directories it depends on (org.fleet4j dependencies not test-scoped). */
    static Map<String, Set<String>> pomEdges() throws Exception {
        Map<String, String> dirOfArtifact = new HashMap<>();
        Map<String, List<Element>> dependencies = new LinkedHashMap<>();
        for (Element module : children(pom(ROOT.resolve("pom.xml")).getDocumentElement(), "modules", "module")) {
            String dir = module.getTextContent().trim();
            Element project = pom(ROOT.resolve(dir).resolve("pom.xml")).getDocumentElement();
            dirOfArtifact.put(childText(project, "artifactId"), dir);
            dependencies.put(dir, children(project, "dependencies", "dependency"));
        }
        Map<String, Set<String>> edges = new TreeMap<>();
        dependencies.forEach((dir, deps) -> {
            Set<String> to = new TreeSet<>();
            for (Element d : deps) {
                String target = dirOfArtifact.get(childText(d, "artifactId"));
                if ("org.fleet4j".equals(childText(d, "groupId")) && !"test".equals(childText(d, "scope")) && target != null) {
                    to.add(target);
                }
            }
            edges.put(dir, to);
        });
        return edges;
    }

    private static Document pom(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    private static List<Element> children(Element parent, String container, String name) {
        List<Element> out = new ArrayList<>();
        for (Element c : directChildren(parent, container)) {
            out.addAll(directChildren(c, name));
        }
        return out;
    }

    private static List<Element> directChildren(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i).getNodeType() == Node.ELEMENT_NODE && nodes.item(i).getNodeName().equals(name)) {
                out.add((Element) nodes.item(i));
            }
        }
        return out;
    }

    private static String childText(Element parent, String name) {
        List<Element> found = directChildren(parent, name);
        return found.isEmpty() ? null : found.getFirst().getTextContent().trim();
    }

    /** Package → the other packages of the same source tree that its classes import. */
    static Map<String, Set<String>> packageImports(Path sources) throws IOException {
        Map<String, Set<String>> imported = new TreeMap<>();
        if (!Files.isDirectory(sources)) {
            return imported;
        }
        Map<String, List<String>> importsOf = new HashMap<>();
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String src = Files.readString(f);
                Matcher p = PACKAGE.matcher(src);
                if (!p.find()) {
                    continue;
                }
                List<String> imports = importsOf.computeIfAbsent(p.group(1), k -> new ArrayList<>());
                Matcher i = IMPORT.matcher(src);
                while (i.find()) {
                    imports.add(i.group(1));
                }
            }
        }
        importsOf.forEach((pkg, imports) -> {
            Set<String> to = new TreeSet<>();
            for (String name : imports) {
                String target = null;
                for (String candidate : importsOf.keySet()) {
                    if ((name.equals(candidate) || name.startsWith(candidate + "."))
                            && (target == null || candidate.length() > target.length())) {
                        target = candidate;
                    }
                }
                if (target != null && !target.equals(pkg)) {
                    to.add(target);
                }
            }
            imported.put(pkg, to);
        });
        return imported;
    }

    /** The strongly connected sets of more than one package (Tarjan), each sorted, in a sorted list. */
    static List<List<String>> packageCycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new java.util.HashSet<>();
        List<List<String>> cycles = new ArrayList<>();
        for (String start : new TreeSet<>(graph.keySet())) {
            if (!index.containsKey(start)) {
                connect(start, graph, index, low, stack, onStack, cycles);
            }
        }
        cycles.sort((a, b) -> a.getFirst().compareTo(b.getFirst()));
        return cycles;
    }

    private static void connect(String v, Map<String, Set<String>> graph, Map<String, Integer> index,
            Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<List<String>> cycles) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        onStack.add(v);
        for (String w : new TreeSet<>(graph.getOrDefault(v, Set.of()))) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, onStack, cycles);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> component = new ArrayList<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                component.sort(String::compareTo);
                cycles.add(component);
            }
        }
    }
}
