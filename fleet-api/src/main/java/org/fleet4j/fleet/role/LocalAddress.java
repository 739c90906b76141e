package org.fleet4j.fleet.role;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.fleet4j.text.Quoted;

/** This machine's address as another node reaches it: the one the kernel would send from towards the master. */
public final class LocalAddress {
    private LocalAddress() {
    }

    /**
     * @param master host:port
     * @param who    names the environment in the error
     * @throws IllegalArgumentException when the master cannot be resolved or reached
     */
    public static String towards(String master, String who) {
        int colon = master.lastIndexOf(':');
        String host = colon > 0 ? master.substring(0, colon) : master;
        int port = colon > 0 ? Integer.parseInt(master.substring(colon + 1)) : 1;
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(host, port));
            InetAddress local = probe.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new IllegalArgumentException(who + ": no route from this machine to the master " + Quoted.of(master));
            }
            return local.getHostAddress();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException(who + ": cannot reach the master " + Quoted.of(master) + " from this machine ("
                    + e.getMessage() + ")", e);
        }
    }
}
