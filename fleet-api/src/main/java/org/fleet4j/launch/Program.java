package org.fleet4j.launch;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import org.fleet4j.text.Quoted;

/**
 * What each rank runs: a main class, and the jar it came from when PROGRAM was a jar (that jar goes on
 * the rank's classpath after the launcher's own).
 */
public record Program(String mainClass, List<Path> extraClasspath) {
    private static final Pattern CLASS_NAME =
            Pattern.compile("\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");

    public Program {
        extraClasspath = List.copyOf(extraClasspath);
    }

    /**
     * Resolves PROGRAM (a built-in name, a main class, or a jar) and checks that its main class can be
     * found on {@code baseClasspath} plus the jar, so a typo fails here rather than in every rank.
     */
    public static Program resolve(String token, List<Path> baseClasspath) {
        Program program = parse(token);
        List<Path> classpath = new ArrayList<>(baseClasspath);
        classpath.addAll(program.extraClasspath());
        if (!isLoadable(program.mainClass(), classpath)) {
            String where = program.extraClasspath().isEmpty() ? "the classpath" : program.extraClasspath().get(0) + " or the classpath";
            String builtin = NamedPrograms.mainClass(token).isPresent()
                    ? "; the built-in program '" + token + "' is not part of this build"
                    : "";
            throw new LaunchException("PROGRAM " + Quoted.of(token) + ": main class " + program.mainClass() + " not found on "
                    + where + builtin + " (classpath: " + summarise(baseClasspath) + ")");
        }
        return program;
    }

    private static Program parse(String token) {
        var builtin = NamedPrograms.mainClass(token);
        if (builtin.isPresent()) {
            return new Program(builtin.get(), List.of());
        }
        boolean className = CLASS_NAME.matcher(token).matches();
        if (token.endsWith(".jar") || !className && Files.isRegularFile(Path.of(token))) {
            return fromJar(Path.of(token).toAbsolutePath().normalize(), token);
        }
        if (className) {
            return new Program(token, List.of());
        }
        throw new LaunchException("PROGRAM " + Quoted.of(token) + " is neither a built-in (" + String.join(", ", NamedPrograms.all().keySet())
                + "), a main class, nor a jar file");
    }

    private static Program fromJar(Path jar, String token) {
        if (!Files.isRegularFile(jar)) {
            throw new LaunchException("PROGRAM " + Quoted.of(token) + ": jar file not found: " + jar);
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            Manifest manifest = file.getManifest();
            String mainClass = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.MAIN_CLASS);
            if (mainClass == null || mainClass.isBlank()) {
                throw new LaunchException("PROGRAM " + Quoted.of(token) + ": " + jar + " has no Main-Class in META-INF/MANIFEST.MF;"
                        + " name the main class instead and put the jar on CLASSPATH");
            }
            return new Program(mainClass.trim(), List.of(jar));
        } catch (IOException e) {
            throw new LaunchException("PROGRAM " + Quoted.of(token) + ": cannot read " + jar + " as a jar: " + e.getMessage(), e);
        }
    }

    private static boolean isLoadable(String mainClass, List<Path> classpath) {
        URL[] urls = classpath.stream().map(Program::toUrl).toArray(URL[]::new);
        try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            // The resource check avoids loading (and linking) the class and everything it references.
            return loader.findResource(mainClass.replace('.', '/') + ".class") != null;
        } catch (IOException e) {
            return false;
        }
    }

    private static URL toUrl(Path entry) {
        try {
            return entry.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new LaunchException("classpath entry " + entry + " is not a valid path: " + e.getMessage(), e);
        }
    }

    private static String summarise(List<Path> classpath) {
        if (classpath.isEmpty()) {
            return "empty";
        }
        Path folder = classpath.get(0).getParent();
        if (folder != null && classpath.stream().allMatch(entry -> folder.equals(entry.getParent()))) {
            return folder + "/* (" + classpath.size() + " entries)";
        }
        return classpath.get(0) + " and " + (classpath.size() - 1) + " more";
    }
}
