package org.fleet4j.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The memory one CPU rank takes, from its JVM flags, and the check that a job's ranks fit the memory this machine has
 * available before any starts: ranks that cannot fit push the machine into swap or the OOM killer, and with hundreds
 * of them no teardown is quick.
 *
 * @param heap the rank's heap: -Xmx when given (the rank may grow to it), else its initial heap (-Xms, or the JVM's
 *             default of 1/64 of RAM), which a working rank fills; the default maximum of 1/4 of RAM is a ceiling
 *             every rank of the machine shares, not what each takes
 * @param offHeap the limit of its off-heap memory (tensors are off-heap): -XX:MaxDirectMemorySize when given, else
 *                the JVM's default for it, the -Xmx; 0 without either, as nothing bounds it then
 * @param heapSource where the heap figure came from, for the message
 * @param offHeapSource where the off-heap figure came from, for the message
 */
record RankMemory(long heap, String heapSource, long offHeap, String offHeapSource) {
    /** What a JVM holds besides heap and off-heap data: an idle rank JVM is about 40 MiB resident (VmRSS), a working one more (compiled code, metaspace, threads). */
    static final long JVM_OVERHEAD = 64L << 20;
    private static final Pattern SIZE = Pattern.compile("(\\d+)([kmgt]?)", Pattern.CASE_INSENSITIVE);

    /** The memory of a rank started with these JVM flags on a machine of {@code totalRam} bytes. */
    static RankMemory of(List<String> jvmArgs, long totalRam) {
        OptionalLong maxHeap = lastSize(jvmArgs, "-Xmx", "-XX:MaxHeapSize=");
        OptionalLong initialHeap = lastSize(jvmArgs, "-Xms", "-XX:InitialHeapSize=");
        OptionalLong maxDirect = lastSize(jvmArgs, "-XX:MaxDirectMemorySize=");
        long heap;
        String heapSource;
        if (maxHeap.isPresent()) {
            heap = maxHeap.getAsLong();
            heapSource = "-Xmx";
        } else if (initialHeap.isPresent()) {
            heap = initialHeap.getAsLong();
            heapSource = "-Xms, no -Xmx";
        } else {
            heap = totalRam / 64;
            heapSource = "the JVM's initial heap, 1/64 of " + size(totalRam) + " RAM; no -Xmx";
        }
        if (maxDirect.isPresent()) {
            return new RankMemory(heap, heapSource, maxDirect.getAsLong(), "-XX:MaxDirectMemorySize");
        }
        if (maxHeap.isPresent()) {
            return new RankMemory(heap, heapSource, maxHeap.getAsLong(), "-XX:MaxDirectMemorySize defaults to -Xmx");
        }
        return new RankMemory(heap, heapSource, 0, "not limited");
    }

    long perRank() {
        return heap + offHeap + JVM_OVERHEAD;
    }

    /**
     * Refuses {@code ranks} ranks whose memory exceeds MemAvailable of {@code meminfo} (/proc/meminfo), with a message
     * giving the numbers and the ways out; says nothing where /proc/meminfo is missing (not Linux).
     */
    static void check(int ranks, List<String> jvmArgs, Path meminfo) {
        OptionalLong total = meminfoBytes(meminfo, "MemTotal");
        OptionalLong available = meminfoBytes(meminfo, "MemAvailable");
        if (total.isEmpty() || available.isEmpty()) {
            return;
        }
        RankMemory rank = of(jvmArgs, total.getAsLong());
        long needed = rank.perRank() * ranks;
        if (needed <= available.getAsLong()) {
            return;
        }
        long fitting = available.getAsLong() / rank.perRank();
        throw new LaunchException(ranks + " rank(s) need about " + size(needed) + " but this machine has " + size(available.getAsLong())
                + " available (MemAvailable in " + meminfo + "): each rank " + size(rank.perRank()) + " = heap " + size(rank.heap)
                + " (" + rank.heapSource + ") + off-heap " + size(rank.offHeap) + " (" + rank.offHeapSource + ") + JVM "
                + size(JVM_OVERHEAD) + "; run at most " + fitting + " rank(s) with --nproc_per_node, lower -Xmx or"
                + " -XX:MaxDirectMemorySize in --jvm_args, or pass --skip_memory_check");
    }

    /** The last of these flags' sizes (the JVM takes the last), or empty when none is given or it does not parse. */
    static OptionalLong lastSize(List<String> jvmArgs, String... flags) {
        OptionalLong found = OptionalLong.empty();
        for (String arg : jvmArgs) {
            for (String flag : flags) {
                if (arg.startsWith(flag)) {
                    found = parseSize(arg.substring(flag.length()));
                }
            }
        }
        return found;
    }

    private static OptionalLong parseSize(String text) {
        Matcher m = SIZE.matcher(text);
        if (!m.matches()) {
            return OptionalLong.empty();
        }
        int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        try {
            return OptionalLong.of(Math.multiplyExact(Long.parseLong(m.group(1)), 1L << shift));
        } catch (ArithmeticException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private static OptionalLong meminfoBytes(Path meminfo, String key) {
        try {
            for (String line : Files.readAllLines(meminfo)) {
                if (line.startsWith(key + ":")) {
                    String[] words = line.substring(key.length() + 1).trim().split("\\s+");
                    return OptionalLong.of(Long.parseLong(words[0]) << 10);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // no figures to check against
        }
        return OptionalLong.empty();
    }

    /** Bytes in binary units with one decimal, e.g. 21.9 GiB. */
    static String size(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double value = bytes;
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
