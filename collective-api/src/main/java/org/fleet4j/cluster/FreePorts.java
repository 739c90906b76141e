package org.fleet4j.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs of TCP ports that are free now, for listeners that bind them a moment later (a launcher's ranks, a test's
 * server), chosen below the kernel's ephemeral range where there is room.
 *
 * <p>A port picked by binding port 0 comes from the ephemeral range, the same range the kernel draws from for the
 * local end of every outgoing connection. Between the pick and the listener's bind (a JVM's start-up: seconds), any
 * process on the machine that connects anywhere, the job's own ranks included, can be given that port for its
 * socket, and the listener's bind then fails. Linux never hands a port below the range
 * ({@code /proc/sys/net/ipv4/ip_local_port_range}, 32768-60999 by default) to a connection, so a run picked there can
 * be taken only by another explicit bind. Ports from {@value #LOWEST} up to the range are tried at random, each run
 * bound whole before it is returned; without room there (a range that starts low), without the file (not Linux), or
 * when 100 random runs were all taken, the run starts at a port the kernel picks, as before.
 */
public final class FreePorts {
    /** The lowest port tried: above the ports well-known services are registered on in their thousands. */
    static final int LOWEST = 20_000;
    static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int ATTEMPTS = 100;

    private FreePorts() {
    }

    /** One port that was free a moment ago. */
    public static int one() {
        return consecutive(1);
    }

    /**
     * First port of {@code count} consecutive ports that were all free a moment ago.
     *
     * @throws IllegalStateException when 200 tries found no such run
     * @throws UncheckedIOException when no TCP socket can be opened at all
     */
    public static int consecutive(int count) {
        return consecutive(count, ephemeralLow());
    }

    /**
     * As {@link #consecutive(int)}, with the ephemeral range starting at {@code ephemeralLow} (empty: unknown): 100
     * random runs below the range where it leaves room, then 100 that start where the kernel's bind(0) says.
     */
    static int consecutive(int count, OptionalInt ephemeralLow) {
        if (count < 1) {
            throw new IllegalArgumentException("a run of " + count + " ports: expected at least 1");
        }
        if (ephemeralLow.isPresent() && ephemeralLow.getAsInt() - count >= LOWEST) {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                int start = ThreadLocalRandom.current().nextInt(LOWEST, ephemeralLow.getAsInt() - count + 1);
                if (runFree(start, count)) {
                    return start;
                }
            }
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int start;
            try (ServerSocket first = new ServerSocket(0)) {
                start = first.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open a TCP socket on this machine to find a free port", e);
            }
            if (start + count - 1 <= 65535 && runFree(start, count)) {
                return start;
            }
        }
        throw new IllegalStateException("found no " + count + " consecutive free TCP ports after " + 2 * ATTEMPTS
                + " tries");
    }

    /** Whether ports {@code start .. start + count - 1} can all be bound now (each bound, then all closed). */
    static boolean runFree(int start, int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int port = start; port < start + count; port++) {
                held.add(new ServerSocket(port));
            }
            return true;
        } catch (IOException taken) {
            return false;
        } finally {
            held.forEach(FreePorts::closeQuietly);
        }
    }

    /** The first port of the kernel's ephemeral range, if this is Linux and the file reads as two numbers. */
    static OptionalInt ephemeralLow() {
        try {
            // a stream read to its end: procfs files report size 0, and a read sized by that returns a part
            String text;
            try (InputStream in = Files.newInputStream(RANGE)) {
                text = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            }
            String[] parts = text.trim().split("\\s+");
            return parts.length == 2 ? OptionalInt.of(Integer.parseInt(parts[0])) : OptionalInt.empty();
        } catch (IOException | NumberFormatException | SecurityException e) {
            return OptionalInt.empty();
        }
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a listening socket that never accepted cannot lose data
        }
    }
}
