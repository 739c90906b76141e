package org.fleet4j.gpu;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A test stand-in for NVRTC where the CUDA toolkit is installed without a driver: nvcc compiles the same sources to
 * cubins for a named architecture, which needs no GPU. Production never uses it (no nvcc at build or run time).
 */
final class NvccCompiler implements KernelCompiler {
    private final Path nvcc;
    private final Path work;

    NvccCompiler(Path nvcc, Path work) {
        this.nvcc = nvcc;
        this.work = work;
    }

    /** nvcc from $CUDA_HOME/bin, /usr/local/cuda/bin or the PATH; null when there is none. */
    static Path find() {
        String home = System.getenv("CUDA_HOME");
        for (String dir : new String[]{home == null ? null : home + "/bin", "/usr/local/cuda/bin"}) {
            if (dir != null && Files.isExecutable(Path.of(dir, "nvcc"))) {
                return Path.of(dir, "nvcc");
            }
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "nvcc"))) {
                return Path.of(dir, "nvcc");
            }
        }
        return null;
    }

    @Override
    public byte[] compileToCubin(String moduleName, String source, String arch) {
        try {
            Path cu = work.resolve(moduleName + ".cu");
            Path cubin = work.resolve(moduleName + "-" + arch + ".cubin");
            Files.writeString(cu, source);
            Process p = new ProcessBuilder(nvcc.toString(), "-cubin", "-arch=" + arch, "-o", cubin.toString(), cu.toString())
                    .redirectErrorStream(true).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("nvcc took over 120 s on module " + moduleName);
            }
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("nvcc failed on module " + moduleName + " for " + arch + ":\n" + log);
            }
            return Files.readAllBytes(cubin);
        } catch (IOException e) {
            throw new IllegalStateException("running " + nvcc + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while nvcc compiled " + moduleName, e);
        }
    }

    @Override
    public String identity() {
        return "nvcc at " + nvcc;
    }
}
