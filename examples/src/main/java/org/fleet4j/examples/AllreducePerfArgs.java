package org.fleet4j.examples;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.group.OpKind;
import org.fleet4j.text.Quoted;

/**
 * The command line of allreduce_perf; every mistake becomes an IllegalArgumentException with a one-line message.
 * {@code tensorboard} is the folder of --tensorboard, or null.
 */
record AllreducePerfArgs(List<Long> sizes, OpKind op, Backend backend, int repeats, Duration perSize, int slotBytes,
                int chunkBytes, boolean verifyCalls, boolean registered, Path tensorboard) {

    static final String USAGE = "usage: allreduce_perf [--sizes 4K,64K,1M,16M,64M] [--op allreduce|broadcast|allgather|reduce_scatter]"
            + " [--backend auto|shm|tcp|hierarchical] [--repeats 5] [--ms_per_size 400] [--shm_slot 1M] [--tcp_chunk 256K]"
            + " [--no_verify] [--registered] [--tensorboard DIR]";

    static AllreducePerfArgs parse(String[] args) {
        List<Long> sizes = List.of(4L << 10, 64L << 10, 1L << 20, 16L << 20, 64L << 20);
        OpKind op = OpKind.ALLREDUCE;
        Backend backend = Backend.AUTO;
        int repeats = 5;
        long msPerSize = 400;
        int slot = 1 << 20;
        int chunk = 256 << 10;
        boolean verify = true;
        boolean registered = false;
        Path tensorboard = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--sizes" -> sizes = parseSizes(value(args, ++i, a));
                case "--op" -> op = parseOp(value(args, ++i, a));
                case "--backend" -> backend = Backend.parse(value(args, ++i, a));
                case "--repeats" -> repeats = (int) positive(value(args, ++i, a), a);
                case "--ms_per_size" -> msPerSize = positive(value(args, ++i, a), a);
                case "--shm_slot" -> slot = (int) parseSize(value(args, ++i, a));
                case "--tcp_chunk" -> chunk = (int) parseSize(value(args, ++i, a));
                case "--no_verify" -> verify = false;
                case "--registered" -> registered = true;
                case "--tensorboard" -> tensorboard = Path.of(value(args, ++i, a));
                case "-h", "--help" -> throw new IllegalArgumentException(USAGE);
                default -> throw new IllegalArgumentException("unknown argument " + Quoted.of(a) + "; " + USAGE);
            }
        }
        return new AllreducePerfArgs(sizes, op, backend, repeats, Duration.ofMillis(msPerSize), slot, chunk, verify, registered,
                tensorboard);
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value; " + USAGE);
        }
        return args[i];
    }

    private static long positive(String v, String flag) {
        try {
            long x = Long.parseLong(v);
            if (x <= 0) {
                throw new NumberFormatException();
            }
            return x;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " " + Quoted.of(v) + " is not a positive integer");
        }
    }

    private static OpKind parseOp(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "allreduce" -> OpKind.ALLREDUCE;
            case "broadcast" -> OpKind.BROADCAST;
            case "allgather" -> OpKind.ALLGATHER;
            case "reduce_scatter", "reducescatter" -> OpKind.REDUCE_SCATTER;
            default -> throw new IllegalArgumentException("--op " + Quoted.of(v) + " is not one of allreduce, broadcast, allgather, reduce_scatter");
        };
    }

    static List<Long> parseSizes(String v) {
        List<Long> out = new ArrayList<>();
        for (String s : v.split(",")) {
            if (!s.isBlank()) {
                out.add(parseSize(s.trim()));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--sizes " + Quoted.of(v) + " lists no size");
        }
        return out;
    }

    /** "4K", "1M", "64M", "1G" or plain bytes; binary units as nccl-tests uses them. */
    static long parseSize(String s) {
        String u = s.toUpperCase(Locale.ROOT);
        long mult = 1;
        if (u.endsWith("B")) {
            u = u.substring(0, u.length() - 1);
        }
        if (u.endsWith("K")) {
            mult = 1L << 10;
        } else if (u.endsWith("M")) {
            mult = 1L << 20;
        } else if (u.endsWith("G")) {
            mult = 1L << 30;
        }
        String digits = mult == 1 ? u : u.substring(0, u.length() - 1);
        try {
            long x = Long.parseLong(digits);
            if (x <= 0) {
                throw new NumberFormatException();
            }
            return x * mult;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size " + Quoted.of(s) + " is not a positive byte count like 4K, 1M or 64M");
        }
    }
}
