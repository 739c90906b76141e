package org.fleet4j.examples;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/** A compiled test class (with its nested classes) packed as a user's jar with a Main-Class, for bin/fleetrun JAR. */
final class ProgramJar {
    private ProgramJar() {
    }

    static Path of(Class<?> mainClass, Path jar) throws IOException {
        Path classes;
        try {
            classes = Path.of(mainClass.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IOException("cannot locate the classes of " + mainClass.getName(), e);
        }
        String dir = mainClass.getPackageName().replace('.', '/');
        String simple = mainClass.getSimpleName();
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass.getName());
        Files.createDirectories(jar.getParent());
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             Stream<Path> files = Files.list(classes.resolve(dir))) {
            for (Path file : files.filter(f -> f.getFileName().toString().equals(simple + ".class")
                    || f.getFileName().toString().startsWith(simple + "$")).toList()) {
                out.putNextEntry(new JarEntry(dir + "/" + file.getFileName()));
                Files.copy(file, out);
                out.closeEntry();
            }
        }
        return jar;
    }
}
