package org.fleet4j.collective.tcp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Reads and sets a connected socket's TCP congestion control (Linux {@code TCP_CONGESTION}), which Java has no
 * socket option for. The channel's file descriptor is found by its addresses: the descriptor under
 * {@code /proc/self/fd} whose {@code getsockname} and {@code getpeername} equal the channel's local and remote
 * address (a connection's address pair is unique on a host). Anything unavailable (another OS, no
 * {@code /proc}, a refused option) makes {@link #set} return false: it is a tuning, never needed for correctness.
 */
final class CongestionControl {
    private static final int IPPROTO_TCP = 6;
    private static final int TCP_CONGESTION = 13;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;
    /** Linux's TCP_CA_NAME_MAX. */
    private static final int NAME_BYTES = 16;
    private static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final Natives NATIVES = Natives.load();

    private CongestionControl() {
    }

    /** The libc functions used, or none where they cannot be bound. */
    private record Natives(MethodHandle getsockname, MethodHandle getpeername, MethodHandle getsockopt,
                           MethodHandle setsockopt) {
        static Natives load() {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                FunctionDescriptor name = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.ADDRESS);
                FunctionDescriptor getopt = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS);
                FunctionDescriptor setopt = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
                return new Natives(
                        linker.downcallHandle(libc.find("getsockname").orElseThrow(), name),
                        linker.downcallHandle(libc.find("getpeername").orElseThrow(), name),
                        linker.downcallHandle(libc.find("getsockopt").orElseThrow(), getopt),
                        linker.downcallHandle(libc.find("setsockopt").orElseThrow(), setopt));
            } catch (RuntimeException e) {
                return null;
            }
        }
    }

    /** The congestion control of {@code ch}'s connection, or null where it cannot be read. */
    static String get(SocketChannel ch) {
        int fd = descriptorOf(ch);
        if (fd < 0) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocate(NAME_BYTES);
            MemorySegment len = arena.allocate(ValueLayout.JAVA_INT);
            len.set(ValueLayout.JAVA_INT, 0, NAME_BYTES);
            if ((int) NATIVES.getsockopt.invokeExact(fd, IPPROTO_TCP, TCP_CONGESTION, name, len) != 0) {
                return null;
            }
            return name.getString(0, StandardCharsets.US_ASCII);
        } catch (Throwable e) {
            return null;
        }
    }

    /** Sets the congestion control of {@code ch}'s connection to {@code algorithm}; false if that did not happen. */
    static boolean set(SocketChannel ch, String algorithm) {
        int fd = descriptorOf(ch);
        if (fd < 0) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            byte[] bytes = algorithm.getBytes(StandardCharsets.US_ASCII);
            MemorySegment name = arena.allocate(bytes.length);
            name.copyFrom(MemorySegment.ofArray(bytes));
            return (int) NATIVES.setsockopt.invokeExact(fd, IPPROTO_TCP, TCP_CONGESTION, name, bytes.length) == 0;
        } catch (Throwable e) {
            return false;
        }
    }

    /** Whether {@code address} is this host's: loopback, or an address of one of its interfaces. */
    static boolean isThisHost(InetAddress address) {
        try {
            return address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    /** The file descriptor of {@code ch}, or -1 where it cannot be found. */
    static int descriptorOf(SocketChannel ch) {
        if (NATIVES == null) {
            return -1;
        }
        SocketAddress local;
        SocketAddress remote;
        try {
            local = ch.getLocalAddress();
            remote = ch.getRemoteAddress();
        } catch (IOException e) {
            return -1;
        }
        if (local == null || remote == null) {
            return -1;
        }
        try (Arena arena = Arena.ofConfined();
             DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            MemorySegment addr = arena.allocate(128, 8);
            MemorySegment len = arena.allocate(ValueLayout.JAVA_INT);
            for (Path p : fds) {
                int fd;
                try {
                    fd = Integer.parseInt(p.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                if (remote.equals(address(NATIVES.getpeername, fd, addr, len))
                        && local.equals(address(NATIVES.getsockname, fd, addr, len))) {
                    return fd;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** The IP socket address that {@code call} (getsockname or getpeername) gives for {@code fd}, else null. */
    private static InetSocketAddress address(MethodHandle call, int fd, MemorySegment addr, MemorySegment len) {
        len.set(ValueLayout.JAVA_INT, 0, (int) addr.byteSize());
        try {
            if ((int) call.invokeExact(fd, addr, len) != 0) {
                return null;
            }
            int family = addr.get(ValueLayout.JAVA_SHORT, 0);
            int port = Short.toUnsignedInt(addr.get(PORT, 2));
            byte[] ip = switch (family) {
                case AF_INET -> addr.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE);
                case AF_INET6 -> addr.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
                default -> null;
            };
            return ip == null ? null : new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (Throwable e) {
            return null;
        }
    }
}
