package org.fleet4j.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One CUDA C source file of Fleet4J's kernels (a resource under {@code org/fleet4j/gpu/kernels}) and the entry points
 * it defines. Sources are compiled at run time for the device at hand, never at build time.
 *
 * @param name        the file name without ".cu"
 * @param source      the CUDA C text
 * @param entryPoints the {@code extern "C" __global__} functions, in source order
 */
public record KernelModule(String name, String source, List<String> entryPoints) {
    /** Every module Fleet4J ships, in the order they are listed. */
    public static final List<String> NAMES =
            List.of("elementwise", "activations", "softmax_xent", "reduce", "optimizers", "amp", "embedding",
                    "batch_norm", "fill", "metrics", "dropout");

    private static final Pattern ENTRY = Pattern.compile("^extern \"C\" __global__ void (\\w+)\\(.*$", Pattern.MULTILINE);
    private static final Pattern MACRO_ENTRY = Pattern.compile("^BINARY\\((\\w+),", Pattern.MULTILINE);

    public KernelModule {
        entryPoints = List.copyOf(entryPoints);
    }

    public static KernelModule load(String name) {
        String resource = "kernels/" + name + ".cu";
        try (InputStream in = KernelModule.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no kernel module '" + name + "' (resource org/fleet4j/gpu/" + resource
                        + "); modules: " + NAMES);
            }
            String source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return new KernelModule(name, source, entryPoints(source));
        } catch (IOException e) {
            throw new UncheckedIOException("reading kernel module " + resource, e);
        }
    }

    public static List<KernelModule> all() {
        return NAMES.stream().map(KernelModule::load).toList();
    }

    /** The kernels a source defines, directly or through the BINARY macro of elementwise.cu. */
    static List<String> entryPoints(String source) {
        List<String> names = new ArrayList<>();
        Matcher m = ENTRY.matcher(source);
        while (m.find()) {
            if (!m.group().endsWith("\\")) { // a line of a macro body declares no kernel itself
                names.add(m.group(1));
            }
        }
        Matcher macro = MACRO_ENTRY.matcher(source);
        while (macro.find()) {
            names.add(macro.group(1));
        }
        return names;
    }
}
