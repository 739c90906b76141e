package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/INTEROP.md's Java examples are whole programs: every one is compiled against the project's classes (so an
 * example that stops compiling fails here) and run, the PyTorch ones on a file that TorchOut writes (no Python
 * needed) and ONNX Runtime's scoring on the file that ExportOnnx writes.
 */
class InteropDocTest {
    private static final Path DOC = Path.of("..", "docs", "INTEROP.md");
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);
    private static final Pattern PUBLIC_CLASS = Pattern.compile("^public class (\\w+)", Pattern.MULTILINE);

    @TempDir
    static Path work;
    private static URLClassLoader programs;

    /** The doc's Java blocks by their public class; a block without one is a fragment, which the doc must not hold. */
    static Map<String, String> examples(String doc) {
        Map<String, String> byClass = new LinkedHashMap<>();
        Matcher block = JAVA_BLOCK.matcher(doc);
        while (block.find()) {
            Matcher name = PUBLIC_CLASS.matcher(block.group(1));
            assertTrue(name.find(), DOC + ": a java block is not a whole program (no public class):\n" + block.group(1));
            assertEquals(null, byClass.put(name.group(1), block.group(1)), DOC + ": class " + name.group(1) + " twice");
        }
        return byClass;
    }

    @BeforeAll
    static void compileEveryExample() throws IOException {
        Map<String, String> examples = examples(Files.readString(DOC, StandardCharsets.UTF_8));
        assertEquals(List.of("NamedModel", "LoadWeights", "TorchIn", "TorchOut", "ExportOnnx", "OnnxMnist"),
                List.copyOf(examples.keySet()), "the examples of " + DOC + " (update this test when adding one)");
        Path src = Files.createDirectories(work.resolve("src"));
        Path classes = Files.createDirectories(work.resolve("classes"));
        List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-cp",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))));
        for (var e : examples.entrySet()) {
            Path file = src.resolve(e.getKey() + ".java");
            Files.writeString(file, e.getValue());
            args.add(file.toString());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        boolean ok = javac.getTask(errors, null, null, args.subList(0, 4),
                null, javac.getStandardFileManager(null, Locale.ROOT, StandardCharsets.UTF_8)
                        .getJavaFileObjectsFromStrings(args.subList(4, args.size()))).call();
        assertTrue(ok, DOC + ": an example does not compile:\n" + errors);
        programs = new URLClassLoader(new URL[]{classes.toUri().toURL()}, InteropDocTest.class.getClassLoader());
    }

    /** Runs an example's main in this JVM; returns what it printed. */
    private static String run(String example, String... args) throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            programs.loadClass(example).getMethod("main", String[].class).invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw new AssertionError(example + " failed: " + e.getCause(), e.getCause());
        } finally {
            System.setOut(out);
        }
        String text = printed.toString(StandardCharsets.UTF_8);
        out.print(text);
        return text;
    }

    @Test
    void namedModelPrintsTheNamesTheDocShows() throws Exception {
        assertEquals("[emb.weight, fc1.weight, fc1.bias, bn.weight, bn.bias, bn.running_mean, bn.running_var,"
                + " hidden.w_0, hidden.b_0, fc_0.w_0, fc_0.b_0]", run("NamedModel").strip());
    }

    @Test
    void loadWeightsLoadsAllThenAllButTheHead() throws Exception {
        assertEquals("loaded [fc_0.w_0, fc_0.b_0, fc_1.w_0, fc_1.b_0]; without the head, missing [fc_1.w_0, fc_1.b_0]",
                run("LoadWeights", work.resolve("weights.safetensors").toString()).strip());
    }

    @Test
    void whatTorchOutWritesTorchInLoadsStrictly() throws Exception {
        Path file = work.resolve("fleet.safetensors");
        run("TorchOut", file.toString());
        String printed = run("TorchIn", file.toString());
        assertTrue(printed.startsWith("loaded 9 weights from " + file), printed);
    }

    @Test
    void exportOnnxWritesAModelThatOnnxRuntimeScores() throws Exception {
        Path file = work.resolve("mnist.onnx");
        String printed = run("ExportOnnx", file.toString());
        assertTrue(printed.contains("wrote " + file + " (input image; outputs elementwise_add_1, softmax_0)"), printed);
        Matcher accuracy = Pattern.compile("ONNX Runtime: test accuracy (\\S+) on 2000 digits")
                .matcher(run("OnnxMnist", file.toString(), "softmax_0"));
        assertTrue(accuracy.find(), "OnnxMnist printed no accuracy");
        assertTrue(Double.parseDouble(accuracy.group(1)) > 0.8, "accuracy " + accuracy.group(1));
    }
}
