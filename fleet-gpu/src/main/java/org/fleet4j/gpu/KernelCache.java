package org.fleet4j.gpu;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled kernels by (source, architecture, compiler): in memory for this process and, when a directory is given, on
 * disk for the next one, because NVRTC takes seconds per module. Files are written whole under a temporary name and
 * moved into place, so ranks sharing the directory never read half a cubin; a file that is not an ELF image is
 * compiled again.
 */
public final class KernelCache {
    /** Where compiled kernels are kept between runs unless this variable names another directory. */
    public static final String DIR_ENV = "FLEET_KERNEL_CACHE";

    private final KernelCompiler compiler;
    private final Path dir;
    private final Map<String, byte[]> memory = new ConcurrentHashMap<>();
    private int compilations;

    /** @param dir the on-disk cache, or null for memory only */
    public KernelCache(KernelCompiler compiler, Path dir) {
        this.compiler = compiler;
        this.dir = dir;
    }

    /** The default directory: $FLEET_KERNEL_CACHE, else ~/.cache/fleet4j/kernels. */
    public static Path defaultDir(Map<String, String> env) {
        String d = env.get(DIR_ENV);
        return d != null && !d.isBlank() ? Path.of(d) : Path.of(System.getProperty("user.home"), ".cache", "fleet4j", "kernels");
    }

    public static String key(String source, String arch, String compilerIdentity) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (String part : new String[]{compilerIdentity, arch, source}) {
                sha.update(part.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    public byte[] cubin(KernelModule module, String arch) {
        String key = key(module.source(), arch, compiler.identity());
        return memory.computeIfAbsent(key, k -> fromDiskOrCompile(module, arch, k)).clone();
    }

    /** How many times the compiler ran (neither memory nor disk had the kernel). */
    public synchronized int compilations() {
        return compilations;
    }

    private byte[] fromDiskOrCompile(KernelModule module, String arch, String key) {
        Path file = dir == null ? null : dir.resolve(module.name() + "-" + arch + "-" + key.substring(0, 24) + ".cubin");
        if (file != null && Files.isRegularFile(file)) {
            try {
                byte[] cached = Files.readAllBytes(file);
                if (isElf(cached)) {
                    return cached;
                }
            } catch (IOException e) {
                // unreadable: compile again and overwrite it below
            }
        }
        byte[] cubin = compiler.compileToCubin(module.name(), module.source(), arch);
        synchronized (this) {
            compilations++;
        }
        if (!isElf(cubin)) {
            throw new IllegalStateException(compiler.identity() + " returned " + cubin.length + " bytes for module "
                    + module.name() + " (" + arch + ") that are not a cubin (no ELF header)");
        }
        if (file != null) {
            store(file, cubin);
        }
        return cubin;
    }

    private static void store(Path file, byte[] cubin) {
        try {
            Files.createDirectories(file.getParent());
            Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
            Files.write(tmp, cubin);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the kernel cache file " + file + ": " + e.getMessage()
                    + "; set " + DIR_ENV + " to a writable directory", e);
        }
    }

    static boolean isElf(byte[] b) {
        return b.length > 16 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
    }
}
