package org.fleet4j.collective.tcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@EnabledOnOs(OS.LINUX)
class CongestionControlTest {

    @Test
    void setsTheAlgorithmOfExactlyTheGivenConnection() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             SocketChannel dialled = SocketChannel.open(server.getLocalAddress());
             SocketChannel accepted = server.accept()) {
            int a = CongestionControl.descriptorOf(dialled);
            int b = CongestionControl.descriptorOf(accepted);
            assertTrue(a >= 0 && b >= 0, "descriptors " + a + ", " + b);
            assertNotEquals(a, b, "the two ends of one connection are different sockets");
            String before = CongestionControl.get(accepted);
            assertNotNull(before, "the kernel's default algorithm is readable");

            assertTrue(CongestionControl.set(dialled, "reno"), "reno is allowed to every process");
            assertEquals("reno", CongestionControl.get(dialled));
            assertEquals(before, CongestionControl.get(accepted), "the other end keeps its own (" + before + ")");
        }
    }

    @Test
    void aGroupsConnectionsToRanksOnThisHostUseTheLocalAlgorithm() throws Exception {
        try (TcpWorld world = new TcpWorld(3, 64 << 10)) {
            for (TcpProcessGroup g : world.groups) {
                for (int peer = 0; peer < 3; peer++) {
                    if (peer != g.rank()) {
                        assertEquals(TcpTransport.LOCAL_CONGESTION_CONTROL, CongestionControl.get(g.transport().channel(peer)),
                                "rank " + g.rank() + "'s connection to rank " + peer);
                    }
                }
            }
        }
    }

    @Test
    void anUnknownAlgorithmIsRefusedAndChangesNothing() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             SocketChannel dialled = SocketChannel.open(server.getLocalAddress());
             SocketChannel accepted = server.accept()) {
            String before = CongestionControl.get(dialled);
            assertFalse(CongestionControl.set(dialled, "no-such-algorithm"));
            assertEquals(before, CongestionControl.get(dialled));
        }
    }

    @Test
    void aChannelThatIsNotConnectedHasNoDescriptorToTune() throws Exception {
        try (SocketChannel unconnected = SocketChannel.open()) {
            assertEquals(-1, CongestionControl.descriptorOf(unconnected));
            assertFalse(CongestionControl.set(unconnected, "reno"));
        }
    }

    @Test
    void loopbackAndThisHostsOwnAddressesAreLocal() throws Exception {
        assertTrue(CongestionControl.isThisHost(InetAddress.getByName("127.0.0.1")));
        assertTrue(CongestionControl.isThisHost(InetAddress.getByName("::1")));
        assertFalse(CongestionControl.isThisHost(InetAddress.getByName("192.0.2.1")), "TEST-NET-1 is nobody's");
    }
}
