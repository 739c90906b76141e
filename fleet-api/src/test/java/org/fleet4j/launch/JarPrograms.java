package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Compiles a one-class program and packs it in a jar with a Main-Class, as a user's jar would be. */
final class JarPrograms {
    private JarPrograms() {
    }

    static Path build(Path buildDir, Path jar, String mainClass, String source) throws IOException {
        Path sourceFile = buildDir.resolve("src").resolve(mainClass.replace('.', '/') + ".java");
        Path classes = Files.createDirectories(buildDir.resolve("classes"));
        Files.createDirectories(sourceFile.getParent());
        Files.writeString(sourceFile, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int status = javac.run(null, null, null, "-d", classes.toString(), sourceFile.toString());
        if (status != 0) {
            throw new IllegalStateException("javac failed on " + sourceFile + " with status " + status);
        }
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass);
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, out);
                out.closeEntry();
            }
        }
        return jar;
    }
}
