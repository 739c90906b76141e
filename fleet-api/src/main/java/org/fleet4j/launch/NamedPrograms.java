package org.fleet4j.launch;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.regex.Pattern;

/** The {@link NamedProgram}s on the launcher's class path, by name; anything else is a main class or a jar. */
public final class NamedPrograms {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]*");
    private static final Map<String, String> MAIN_CLASSES = load();

    private NamedPrograms() {
    }

    private static Map<String, String> load() {
        Map<String, String> byName = new TreeMap<>();
        for (NamedProgram p : ServiceLoader.load(NamedProgram.class, NamedPrograms.class.getClassLoader())) {
            String name = p.programName();
            if (!NAME.matcher(name).matches()) {
                throw new IllegalStateException(p.getClass().getName() + " registers the program name '" + name
                        + "'; a program name is lower case letters, digits and underscores");
            }
            String before = byName.putIfAbsent(name, p.mainClass());
            if (before != null && !before.equals(p.mainClass())) {
                throw new IllegalStateException("two programs are registered as '" + name + "': " + before + " and "
                        + p.mainClass() + "; remove one jar from the class path");
            }
        }
        return Collections.unmodifiableMap(byName);
    }

    public static Optional<String> mainClass(String name) {
        return Optional.ofNullable(MAIN_CLASSES.get(name));
    }

    /** Name to main class, sorted by name, as {@code --help} lists them. */
    public static Map<String, String> all() {
        return MAIN_CLASSES;
    }
}
