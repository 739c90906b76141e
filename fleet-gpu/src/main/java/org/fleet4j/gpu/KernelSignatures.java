package org.fleet4j.gpu;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The C parameters of every kernel entry point, read from the CUDA sources, so a launch whose arguments do not fit
 * its kernel fails on the host with the kernel and the parameter named, instead of handing the GPU a wrong argument
 * buffer (a crash or silent garbage). Pointers take a {@link GpuBuffer}, {@code long long} a Long, {@code int} an
 * Integer, {@code float} a Float.
 */
public final class KernelSignatures {
    private static final Pattern SIGNATURE = Pattern.compile("void (\\w+)\\(([^)]*)\\)");

    private final Map<String, List<String>> parameters = new HashMap<>();

    public KernelSignatures(List<KernelModule> modules) {
        for (KernelModule m : modules) {
            String source = m.source().replace("\\\n", "\n"); // macro bodies continue lines with a backslash
            Map<String, List<String>> declared = new HashMap<>();
            Matcher s = SIGNATURE.matcher(source);
            while (s.find()) {
                List<String> params = new ArrayList<>();
                for (String p : s.group(2).split(",")) {
                    if (!p.isBlank()) {
                        params.add(p.trim().replaceAll("\\s+", " "));
                    }
                }
                declared.put(s.group(1), params);
            }
            for (String entry : m.entryPoints()) {
                // an entry point made by a macro (elementwise.cu's BINARY) has the macro's NAME signature
                List<String> params = declared.containsKey(entry) ? declared.get(entry) : declared.get("NAME");
                if (params == null) {
                    throw new IllegalStateException("kernel module " + m.name() + ": no parameter list found for entry"
                            + " point " + entry);
                }
                for (String p : params) {
                    javaType(m.name(), entry, p);
                }
                parameters.put(entry, List.copyOf(params));
            }
        }
    }

    /** The declarations of a kernel's parameters ("const float* x", "long long n"), in order. */
    public List<String> parameters(String kernel) {
        List<String> p = parameters.get(kernel);
        if (p == null) {
            throw new IllegalArgumentException("no kernel '" + kernel + "' in the modules " + KernelModule.NAMES);
        }
        return p;
    }

    /** Throws naming the kernel and the parameter when {@code args} do not fit its C parameters. */
    public void check(String kernel, Object[] args) {
        List<String> p = parameters(kernel);
        if (args.length != p.size()) {
            throw new IllegalArgumentException("kernel " + kernel + " takes " + p.size() + " arguments (" + String.join(", ", p)
                    + "), the launch passes " + args.length);
        }
        for (int i = 0; i < args.length; i++) {
            Class<?> want = javaType("", kernel, p.get(i));
            if (!want.isInstance(args[i])) {
                throw new IllegalArgumentException("argument " + i + " of kernel " + kernel + " is "
                        + (args[i] == null ? "null" : "a " + args[i].getClass().getSimpleName()) + "; its C parameter '"
                        + p.get(i) + "' takes a " + want.getSimpleName());
            }
        }
    }

    private static Class<?> javaType(String module, String entry, String declaration) {
        if (declaration.contains("*")) {
            return GpuBuffer.class;
        }
        String type = declaration.substring(0, declaration.lastIndexOf(' ')).replace("const ", "");
        return switch (type) {
            case "long long", "unsigned long long" -> Long.class;
            case "int" -> Integer.class;
            case "float" -> Float.class;
            default -> throw new IllegalStateException("kernel " + entry + (module.isEmpty() ? "" : " (module " + module
                    + ")") + ": parameter '" + declaration + "' has a type launches cannot pass (pointers, long long,"
                    + " int, float)");
        };
    }
}
