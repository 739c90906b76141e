import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;

/**
 * The latency of single tcp allreduces (f32 sum), each timed on its own, for tcp_op_latency.sh: after 1.5 s of
 * warm-up per size, OPS operations, and rank 0 prints the 10th, 25th and 50th percentile. On a shared host the low
 * percentiles show the path's cost with the peer on a core, which a mean over back-to-back operations hides.
 * Run: CLASSPATH=DIR bin/fleetrun --nproc_per_node 2 OpLatency SIZES_IN_BYTES OPS
 */
public final class OpLatency {
    private static final Duration TIMEOUT = Duration.ofMinutes(1);

    public static void main(String[] args) {
        long[] sizes = Arrays.stream(args[0].split(",")).mapToLong(Long::parseLong).toArray();
        int ops = Integer.parseInt(args[1]);
        GroupOptions options = GroupOptions.defaults().withBackend(Backend.TCP);
        try (ProcessGroup g = ProcessGroups.init(Role.fromEnvironment(), options); Arena arena = Arena.ofShared()) {
            MemorySegment flag = arena.allocate(4);
            for (long bytes : sizes) {
                MemorySegment buf = arena.allocate(bytes, 4096);
                for (long i = 0; i < bytes / 4; i++) {
                    buf.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1f);
                }
                long warmUntil = System.nanoTime() + 1_500_000_000L;
                do { // rank 0's clock ends the warm-up, so that every rank runs the same operations
                    for (int i = 0; i < 50; i++) {
                        g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(TIMEOUT);
                    }
                    flag.set(ValueLayout.JAVA_INT, 0, g.rank() == 0 && System.nanoTime() > warmUntil ? 1 : 0);
                    g.allreduce(flag, DataType.I32, ReduceOp.MAX).await(TIMEOUT);
                } while (flag.get(ValueLayout.JAVA_INT, 0) == 0);
                double[] us = new double[ops];
                for (int i = 0; i < ops; i++) {
                    long t0 = System.nanoTime();
                    g.allreduce(buf, DataType.F32, ReduceOp.SUM).await(TIMEOUT);
                    us[i] = (System.nanoTime() - t0) / 1e3;
                }
                Arrays.sort(us);
                if (g.rank() == 0) {
                    System.out.printf(Locale.ROOT, "latency %d p10 %.1f p25 %.1f p50 %.1f%n", bytes, us[ops / 10], us[ops / 4], us[ops / 2]);
                }
            }
        }
    }
}
