package org.fleet4j.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Finds a run of consecutive free TCP ports, so one node's ranks get start_port + local_rank each. */
final class FreePorts {
    private static final int ATTEMPTS = 100;

    private FreePorts() {
    }

    /** First port of {@code count} consecutive ports that were all free a moment ago. */
    static int consecutive(int count) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            List<ServerSocket> held = new ArrayList<>();
            try {
                ServerSocket first = new ServerSocket(0);
                held.add(first);
                int start = first.getLocalPort();
                if (start + count - 1 > 65535) {
                    continue;
                }
                if (bindRun(start + 1, count - 1, held)) {
                    return start;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open a TCP socket on this machine to find a free port", e);
            } finally {
                held.forEach(FreePorts::closeQuietly);
            }
        }
        throw new LaunchException("found no " + count + " consecutive free TCP ports after " + ATTEMPTS + " tries; pass --start_port");
    }

    private static boolean bindRun(int from, int count, List<ServerSocket> held) {
        for (int port = from; port < from + count; port++) {
            try {
                held.add(new ServerSocket(port));
            } catch (IOException taken) {
                return false;
            }
        }
        return true;
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a listening socket that never accepted cannot lose data
        }
    }
}
