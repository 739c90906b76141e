package org.fleet4j.collective.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.OpCall;
import org.fleet4j.collective.reduce.Reductions;

/**
 * Collectives among ranks of one host through a memory-mapped file: no sockets on the data path. Each operation
 * runs in rounds of at most one slot per rank. In a round of allreduce every rank copies its chunk into its slot
 * and raises its "arrived" flag; rank r then reduces share r of the chunk across all slots (vectorised) and raises
 * "reduced"; everyone copies the reduced shares out and raises "done", which frees the slots for the next round.
 * Flags are monotonically increasing round numbers written with release and read with acquire semantics.
 * A buffer from {@link #registeredBuffer} lives in a file every rank maps ({@link ShmRegion}): its allreduce skips the
 * slots, each rank reducing its share straight from every rank's copy and writing the result into every copy.
 * Waiting spins briefly, then yields, then parks, and checks the deadline, the abort flag and whether the
 * awaited ranks' processes still run.
 */
public final class ShmProcessGroup extends AbstractProcessGroup {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /**
     * Busy-wait this long (peers in step arrive within microseconds), then yield the core, then sleep. With more
     * ranks than cores a spinning rank only delays the one it waits for, so it yields almost at once.
     */
    private static final long SPIN_NANOS = 100_000;
    private static final long OVERSUBSCRIBED_SPIN_NANOS = 20_000;
    private static final long YIELD_NANOS = 20_000_000;
    private static final long PARK_NANOS = 50_000;
    private static final long LIVENESS_CHECK_NANOS = 100_000_000;
    /** Up to this size every rank reduces the whole chunk itself: one synchronisation instead of two. */
    private static final long SMALL_CHUNK_BYTES = 64 << 10;

    private final Arena arena = Arena.ofShared();
    private final ShmLayout layout;
    private final MemorySegment shm;
    private final Path file;
    private final long[] peerPid;
    private final long spinNanos;
    private final long[] sendCount;
    private final long[] recvCount;
    private final List<ShmRegion> regions = new CopyOnWriteArrayList<>();
    private int registrations;
    private long round;

    public ShmProcessGroup(GroupContext ctx) {
        super(ctx);
        int n = size();
        Duration timeout = ctx.options().timeout();
        String pathKey = ctx.key("shm/path");
        try {
            if (rank() == 0) {
                Path dir = ShmFiles.directory();
                ShmFiles.removeStale(dir);
                long slot = ctx.options().shmSlotBytes();
                layout = new ShmLayout(n, slot, Math.min(slot, 256 << 10));
                file = ShmFiles.newFile(dir, ctx.jobId(), ctx.name(), new SecureRandom().nextLong());
                try (FileChannel fc = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE)) {
                    shm = fc.map(FileChannel.MapMode.READ_WRITE, 0, layout.size, arena);
                }
                shm.set(ValueLayout.JAVA_LONG, ShmLayout.H_SIZE, layout.size);
                shm.set(ValueLayout.JAVA_LONG, ShmLayout.H_RANKS, n);
                shm.set(ValueLayout.JAVA_LONG, ShmLayout.H_SLOT, layout.slotBytes);
                shm.set(ValueLayout.JAVA_LONG, ShmLayout.H_MBOX, layout.mboxBytes);
                LONG.setRelease(shm, ShmLayout.H_MAGIC, ShmLayout.MAGIC);
                ctx.store().setString(pathKey, file.toString());
            } else {
                file = Path.of(ctx.store().getString(pathKey, timeout));
                try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    MemorySegment mapped = fc.map(FileChannel.MapMode.READ_WRITE, 0, fc.size(), arena);
                    if ((long) LONG.getAcquire(mapped, ShmLayout.H_MAGIC) != ShmLayout.MAGIC
                            || mapped.get(ValueLayout.JAVA_LONG, ShmLayout.H_RANKS) != n
                            || mapped.get(ValueLayout.JAVA_LONG, ShmLayout.H_SIZE) != fc.size()) {
                        throw new CollectiveException(ctx + ": shared-memory file " + file
                                + " is not a segment for " + n + " ranks (another job's file?)");
                    }
                    layout = new ShmLayout(n, mapped.get(ValueLayout.JAVA_LONG, ShmLayout.H_SLOT),
                            mapped.get(ValueLayout.JAVA_LONG, ShmLayout.H_MBOX));
                    shm = mapped;
                }
            }
            LONG.setRelease(shm, layout.ctrl(rank()) + ShmLayout.C_PID, ProcessHandle.current().pid());
            ctx.store().setString(ctx.key("shm/mapped/" + rank()), "1");
            if (rank() == 0) {
                List<String> keys = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    keys.add(ctx.key("shm/mapped/" + r));
                }
                ctx.store().waitFor(keys, timeout);
                // every rank has it mapped: unlink now, so nothing is left behind even if the job is killed
                Files.deleteIfExists(file);
            }
        } catch (NoSuchFileException e) {
            arena.close();
            throw new CollectiveException(ctx + ": shared-memory file " + e.getFile() + " is gone: "
                    + "are all ranks of this group really on one host (same /dev/shm)?", e);
        } catch (IOException e) {
            arena.close();
            throw new CollectiveException(ctx + ": cannot set up shared memory in " + ShmFiles.directory() + ": " + e, e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        peerPid = new long[n];
        spinNanos = n > Runtime.getRuntime().availableProcessors() ? OVERSUBSCRIBED_SPIN_NANOS : SPIN_NANOS;
        sendCount = new long[n];
        recvCount = new long[n];
    }

    @Override
    public Backend backend() {
        return Backend.SHM;
    }

    // ---- rounds ----------------------------------------------------------------------------------------------

    private long flag(int r, long field) {
        return (long) LONG.getAcquire(shm, layout.ctrl(r) + field);
    }

    private void raise(long field, long value) {
        LONG.setRelease(shm, layout.ctrl(rank()) + field, value);
    }

    /** Starts a round: waits until every rank has finished reading the slots of the previous one. */
    private long beginRound(OpCall call, long deadline) {
        long t = ++round;
        for (int i = 0; i < size(); i++) {
            if (i != rank()) {
                awaitFlag(i, layout.ctrl(i) + ShmLayout.C_DONE, t - 1, call, "finish previous round", deadline);
            }
        }
        return t;
    }

    private void arrive(OpCall call, long t) {
        arrive(call, t, -1, 0);
    }

    /** Arrives in round t, saying which registered region (or -1) and offset in it this rank's buffer lies at. */
    private void arrive(OpCall call, long t, int region, long regionOffset) {
        long c = layout.ctrl(rank());
        shm.set(ValueLayout.JAVA_LONG, c + ShmLayout.C_SEQ, call.seq());
        shm.set(ValueLayout.JAVA_LONG, c + ShmLayout.C_FP_HIGH, call.fingerprintHigh());
        shm.set(ValueLayout.JAVA_LONG, c + ShmLayout.C_FP_LOW, call.fingerprintLow());
        shm.set(ValueLayout.JAVA_LONG, c + ShmLayout.C_REGION, region);
        shm.set(ValueLayout.JAVA_LONG, c + ShmLayout.C_REGION_OFFSET, regionOffset);
        raise(ShmLayout.C_ARRIVED, t);
    }

    /** After every rank arrived: whether all of them published this region and offset. */
    private boolean allArrivedAt(int region, long regionOffset) {
        for (int i = 0; i < size(); i++) {
            long c = layout.ctrl(i);
            if (shm.get(ValueLayout.JAVA_LONG, c + ShmLayout.C_REGION) != region
                    || shm.get(ValueLayout.JAVA_LONG, c + ShmLayout.C_REGION_OFFSET) != regionOffset) {
                return false;
            }
        }
        return true;
    }

    /** Waits until every rank has arrived in round t, and checks that they all issued the same call. */
    private void awaitArrivals(OpCall call, long t, long deadline) {
        for (int i = 0; i < size(); i++) {
            if (i == rank()) {
                continue;
            }
            long c = layout.ctrl(i);
            awaitFlag(i, c + ShmLayout.C_ARRIVED, t, call, "arrive", deadline);
            if (ctx.options().verifyCalls()) {
                long seq = shm.get(ValueLayout.JAVA_LONG, c + ShmLayout.C_SEQ);
                long high = shm.get(ValueLayout.JAVA_LONG, c + ShmLayout.C_FP_HIGH);
                long low = shm.get(ValueLayout.JAVA_LONG, c + ShmLayout.C_FP_LOW);
                if (seq != call.seq() || !call.matches(high, low)) {
                    throw new CollectiveException("mismatched calls on " + ctx + ": this rank issued " + call + " but rank "
                            + i + " issued " + OpCall.describe(high, low, seq)
                            + "; every rank must issue the same calls in the same order");
                }
            }
        }
    }

    private void awaitFlag(int peer, long offset, long target, OpCall call, String phase, long deadline) {
        if ((long) LONG.getAcquire(shm, offset) >= target) {
            return;
        }
        long start = System.nanoTime();
        long nextLiveness = start + LIVENESS_CHECK_NANOS;
        int spins = 0;
        while ((long) LONG.getAcquire(shm, offset) < target) {
            if ((++spins & 127) != 0) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            long waited = now - start;
            if (waited > YIELD_NANOS) {
                LockSupport.parkNanos(PARK_NANOS);
            } else if (waited > spinNanos) {
                Thread.yield();
            }
            long abort = (long) LONG.getAcquire(shm, ShmLayout.H_ABORT);
            if (abort != 0) {
                throw new CollectiveException(call + " on " + ctx + " failed because rank " + (abort - 1)
                        + " aborted the group after: " + abortReason());
            }
            if (now >= nextLiveness) {
                nextLiveness = now + LIVENESS_CHECK_NANOS;
                checkAlive(call, phase);
            }
            if (now - deadline >= 0) {
                throw new CollectiveException(call + " on " + ctx + " timed out after " + ctx.options().timeout().toMillis()
                        + " ms in phase '" + phase + "': ranks " + laggards(offset - layout.ctrl(peer), target, peer)
                        + " did not take part");
            }
            stallWarning().check(now, () -> "ranks " + laggards(offset - layout.ctrl(peer), target, peer) + " (phase '"
                    + phase + "')");
        }
    }

    private List<Integer> laggards(long field, long target, int fallback) {
        List<Integer> late = new ArrayList<>();
        if (field >= 0 && field < ShmLayout.CTRL_STRIDE) {
            for (int i = 0; i < size(); i++) {
                if (i != rank() && flag(i, field) < target) {
                    late.add(i);
                }
            }
        }
        if (late.isEmpty()) {
            late.add(fallback);
        }
        return late;
    }

    /** Fails if any peer's process has exited: the rank we wait on may itself be stuck waiting for the dead one. */
    private void checkAlive(OpCall call, String phase) {
        List<String> dead = new ArrayList<>();
        List<Integer> deadRanks = new ArrayList<>();
        for (int i = 0; i < size(); i++) {
            if (i == rank()) {
                continue;
            }
            if (peerPid[i] == 0) {
                peerPid[i] = flag(i, ShmLayout.C_PID);
            }
            long pid = peerPid[i];
            if (pid != 0 && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                dead.add("rank " + i + " (pid " + pid + ")");
                deadRanks.add(i);
            }
        }
        if (!dead.isEmpty()) {
            throw new CollectiveException(call + " on " + ctx + " failed in phase '" + phase + "': " + String.join(", ", dead)
                    + " exited or was killed; ranks " + deadRanks + " did not take part");
        }
    }

    private long deadline() {
        return System.nanoTime() + ctx.options().timeout().toNanos();
    }

    private long slotElems(OpCall call) {
        return layout.slotBytes / call.dtype().byteSize();
    }

    // ---- collectives -----------------------------------------------------------------------------------------

    @Override
    protected void runAllreduce(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        for (ShmRegion region : regions) {
            long off = region.offsetOf(buffer);
            if (off >= 0) {
                allreduceRegistered(call, buffer, region, off);
                return;
            }
        }
        reduceRounds(call, buffer, -1);
    }

    /**
     * Allreduce of a buffer at offset {@code off} of a registered region, in one round with no staging: rank r
     * reduces share r from every rank's copy into its own, then copies every other share from its owner's copy once
     * that owner has reduced it, and returns when every rank has copied share r from it. Per rank that reads 2n - 1
     * shares and writes n, where the slots cost about twice as much. Each rank writes only its own copy, so the
     * whole result ends in this core's cache for the update that reads it next (writing the result into the other
     * ranks' copies instead left half of each bucket in the other core's cache, which cost the update and the next
     * backward more than the copies saved). Ranks whose buffers are not all at this offset of this region (they
     * passed other memory) agree so at arrival and all take the slots instead.
     */
    private void allreduceRegistered(OpCall call, MemorySegment buffer, ShmRegion region, long off) {
        int n = size();
        int r = rank();
        int es = call.dtype().byteSize();
        long deadline = deadline();
        long c = call.count();
        long t = beginRound(call, deadline);
        arrive(call, t, region.id(), off);
        awaitArrivals(call, t, deadline);
        if (!allArrivedAt(region.id(), off)) {
            restartWithSlots(call, buffer, t);
            return;
        }
        long at = off + c * r / n * es;
        long share = c * (r + 1) / n - c * r / n;
        MemorySegment mine = region.mine();
        for (int k = 1; k < n; k++) {
            Reductions.combine(mine, at, region.part((r + k) % n), at, share, call.dtype(), call.op());
        }
        if (call.op() == ReduceOp.AVG) {
            Reductions.divide(mine, at, share, call.dtype(), n);
        }
        raise(ShmLayout.C_REDUCED, t);
        for (int k = 1; k < n; k++) {
            int j = (r + k) % n;
            long jat = off + c * j / n * es;
            awaitFlag(j, layout.ctrl(j) + ShmLayout.C_REDUCED, t, call, "reduce", deadline);
            MemorySegment.copy(region.part(j), jat, mine, jat, (c * (j + 1) / n - c * j / n) * es);
        }
        raise(ShmLayout.C_DONE, t);
        for (int k = 1; k < n; k++) {
            int j = (r + k) % n;
            awaitFlag(j, layout.ctrl(j) + ShmLayout.C_DONE, t, call, "copy the reduced shares", deadline);
        }
    }

    @Override
    protected void runReduce(OpCall call, MemorySegment buffer) {
        reduceRounds(call, buffer, call.root());
    }

    /**
     * Allreduce when {@code root} is -1, else reduce to root (other ranks' buffers stay as they were). Small
     * chunks take one synchronisation: everyone reduces the whole chunk from all slots in rank order (so every rank
     * gets bit-identical results). Larger chunks split the work: rank r reduces share r straight into its own
     * buffer, publishes it in its slot, and copies the other shares from their owners' slots; a rank never stages
     * the share it reduces itself, which saves a third of the memory traffic.
     */
    private void reduceRounds(OpCall call, MemorySegment buffer, int root) {
        if (size() == 1) {
            return;
        }
        int n = size();
        int r = rank();
        int es = call.dtype().byteSize();
        long deadline = deadline();
        long mySlot = layout.slot(r);
        boolean receives = root < 0 || root == r;
        for (long off = 0; off < call.count(); off += slotElems(call)) {
            long c = Math.min(slotElems(call), call.count() - off);
            long t = beginRound(call, deadline);
            if (c * es <= SMALL_CHUNK_BYTES) {
                MemorySegment.copy(buffer, off * es, shm, mySlot, c * es);
                arrive(call, t);
                awaitArrivals(call, t, deadline);
                if (off == 0 && !allArrivedAt(-1, 0)) {
                    restartWithSlots(call, buffer, t);
                    return;
                }
                if (receives) {
                    MemorySegment.copy(shm, layout.slot(0), buffer, off * es, c * es);
                    for (int i = 1; i < n; i++) {
                        Reductions.combine(buffer, off * es, shm, layout.slot(i), c, call.dtype(), call.op());
                    }
                    if (call.op() == ReduceOp.AVG) {
                        Reductions.divide(buffer, off * es, c, call.dtype(), n);
                    }
                }
                raise(ShmLayout.C_DONE, t);
                continue;
            }
            long lo = c * r / n;
            long share = c * (r + 1) / n - lo;
            for (int j = 0; j < n; j++) {
                if (j != r || !receives) {
                    long jlo = c * j / n;
                    MemorySegment.copy(buffer, (off + jlo) * es, shm, mySlot + jlo * es, (c * (j + 1) / n - jlo) * es);
                }
            }
            arrive(call, t);
            awaitArrivals(call, t, deadline);
            if (off == 0 && !allArrivedAt(-1, 0)) {
                restartWithSlots(call, buffer, t);
                return;
            }
            MemorySegment acc = receives ? buffer : shm;
            long accOff = receives ? (off + lo) * es : mySlot + lo * es;
            for (int k = 1; k < n; k++) {
                int i = (r + k) % n;
                Reductions.combine(acc, accOff, shm, layout.slot(i) + lo * es, share, call.dtype(), call.op());
            }
            if (call.op() == ReduceOp.AVG) {
                Reductions.divide(acc, accOff, share, call.dtype(), n);
            }
            if (receives) {
                MemorySegment.copy(buffer, accOff, shm, mySlot + lo * es, share * es);
            }
            raise(ShmLayout.C_REDUCED, t);
            if (receives) {
                for (int k = 1; k < n; k++) {
                    int j = (r + k) % n;
                    long jlo = c * j / n;
                    awaitFlag(j, layout.ctrl(j) + ShmLayout.C_REDUCED, t, call, "reduce", deadline);
                    MemorySegment.copy(shm, layout.slot(j) + jlo * es, buffer, (off + jlo) * es, (c * (j + 1) / n - jlo) * es);
                }
            }
            raise(ShmLayout.C_DONE, t);
        }
    }

    /**
     * Some rank arrived with a registered buffer while this one has ordinary memory: round t ends as a mere
     * barrier, and every rank (the registered ones too, see {@link #allreduceRegistered}) runs the slot rounds.
     */
    private void restartWithSlots(OpCall call, MemorySegment buffer, long t) {
        raise(ShmLayout.C_DONE, t);
        reduceRounds(call, buffer, -1);
    }

    @Override
    protected void runBroadcast(OpCall call, MemorySegment buffer) {
        if (size() == 1) {
            return;
        }
        int es = call.dtype().byteSize();
        long deadline = deadline();
        long rootSlot = layout.slot(call.root());
        boolean root = rank() == call.root();
        for (long off = 0; off < call.count(); off += slotElems(call)) {
            long c = Math.min(slotElems(call), call.count() - off);
            long t = beginRound(call, deadline);
            if (root) {
                MemorySegment.copy(buffer, off * es, shm, rootSlot, c * es);
            }
            arrive(call, t);
            awaitArrivals(call, t, deadline);
            if (!root) {
                MemorySegment.copy(shm, rootSlot, buffer, off * es, c * es);
            }
            raise(ShmLayout.C_DONE, t);
        }
    }

    @Override
    protected void runAllgather(OpCall call, MemorySegment send, MemorySegment recv) {
        int es = call.dtype().byteSize();
        long m = call.count();
        if (size() == 1) {
            MemorySegment.copy(send, 0, recv, 0, m * es);
            return;
        }
        long deadline = deadline();
        for (long off = 0; off < m; off += slotElems(call)) {
            long c = Math.min(slotElems(call), m - off);
            long t = beginRound(call, deadline);
            MemorySegment.copy(send, off * es, shm, layout.slot(rank()), c * es);
            arrive(call, t);
            awaitArrivals(call, t, deadline);
            for (int j = 0; j < size(); j++) {
                MemorySegment.copy(shm, layout.slot(j), recv, (j * m + off) * es, c * es);
            }
            raise(ShmLayout.C_DONE, t);
        }
    }

    @Override
    protected void runReduceScatter(OpCall call, MemorySegment send, MemorySegment recv) {
        int n = size();
        int r = rank();
        int es = call.dtype().byteSize();
        long m = call.count();
        if (n == 1) {
            MemorySegment.copy(send, 0, recv, 0, m * es);
            return;
        }
        long deadline = deadline();
        long perRound = Math.max(1, slotElems(call) / n);
        long mySlot = layout.slot(r);
        for (long off = 0; off < m; off += perRound) {
            long c = Math.min(perRound, m - off);
            long t = beginRound(call, deadline);
            for (int j = 0; j < n; j++) {
                MemorySegment.copy(send, (j * m + off) * es, shm, mySlot + j * c * es, c * es);
            }
            arrive(call, t);
            awaitArrivals(call, t, deadline);
            MemorySegment.copy(shm, mySlot + r * c * es, recv, off * es, c * es);
            for (int k = 1; k < n; k++) {
                int i = (r + k) % n;
                Reductions.combine(recv, off * es, shm, layout.slot(i) + r * c * es, c, call.dtype(), call.op());
            }
            if (call.op() == ReduceOp.AVG) {
                Reductions.divide(recv, off * es, c, call.dtype(), n);
            }
            raise(ShmLayout.C_DONE, t);
        }
    }

    @Override
    protected void runBarrier(OpCall call) {
        if (size() == 1) {
            return;
        }
        long deadline = deadline();
        long t = beginRound(call, deadline);
        arrive(call, t);
        awaitArrivals(call, t, deadline);
        raise(ShmLayout.C_DONE, t);
    }

    // ---- point to point --------------------------------------------------------------------------------------

    @Override
    protected void runSend(OpCall call, MemorySegment buffer, int dst) {
        long box = layout.mailbox(rank(), dst);
        long deadline = deadline();
        long total = call.count() * call.dtype().byteSize();
        long off = 0;
        do {
            long bytes = Math.min(layout.mboxBytes, total - off);
            long k = ++sendCount[dst];
            awaitFlag(dst, box + ShmLayout.M_ACKED, k - 1, call, "send to rank " + dst, deadline);
            MemorySegment.copy(buffer, off, shm, box + ShmLayout.MBOX_HEADER, bytes);
            shm.set(ValueLayout.JAVA_LONG, box + ShmLayout.M_SEQ, call.seq());
            shm.set(ValueLayout.JAVA_LONG, box + ShmLayout.M_FP_HIGH, call.fingerprintHigh());
            shm.set(ValueLayout.JAVA_LONG, box + ShmLayout.M_FP_LOW, call.fingerprintLow());
            shm.set(ValueLayout.JAVA_LONG, box + ShmLayout.M_BYTES, bytes);
            LONG.setRelease(shm, box + ShmLayout.M_POSTED, k);
            off += bytes;
        } while (off < total);
    }

    @Override
    protected void runRecv(OpCall call, MemorySegment buffer, int src) {
        long box = layout.mailbox(src, rank());
        long deadline = deadline();
        long total = call.count() * call.dtype().byteSize();
        long off = 0;
        do {
            long bytes = Math.min(layout.mboxBytes, total - off);
            long k = ++recvCount[src];
            awaitFlag(src, box + ShmLayout.M_POSTED, k, call, "receive from rank " + src, deadline);
            long seq = shm.get(ValueLayout.JAVA_LONG, box + ShmLayout.M_SEQ);
            long high = shm.get(ValueLayout.JAVA_LONG, box + ShmLayout.M_FP_HIGH);
            long low = shm.get(ValueLayout.JAVA_LONG, box + ShmLayout.M_FP_LOW);
            long sent = shm.get(ValueLayout.JAVA_LONG, box + ShmLayout.M_BYTES);
            if (ctx.options().verifyCalls() && (seq != call.seq() || !call.matches(high, low) || sent != bytes)) {
                throw new CollectiveException("mismatched calls on " + ctx + ": this rank issued recv " + call + " from rank "
                        + src + " but it sent " + OpCall.describe(high, low, seq));
            }
            MemorySegment.copy(shm, box + ShmLayout.MBOX_HEADER, buffer, off, bytes);
            LONG.setRelease(shm, box + ShmLayout.M_ACKED, k);
            off += bytes;
        } while (off < total);
    }

    // ---- registered buffers ----------------------------------------------------------------------------------

    /** A region every rank maps (one file per registration; see {@link ShmRegion}). */
    @Override
    protected MemorySegment allocateRegistered(String name, long bytes) {
        int id = registrations++;
        if (size() == 1 || bytes == 0) {
            return super.allocateRegistered(name, bytes);
        }
        ShmRegion region = ShmRegion.map(ctx, id, name, bytes, arena);
        regions.add(region);
        return region.mine();
    }

    // ---- lifecycle -------------------------------------------------------------------------------------------

    /** Publishes the first failure with its message, so that ranks still waiting fail at once and can say why. */
    @Override
    protected void abort(CollectiveException reason) {
        if (!LONG.compareAndSet(shm, ShmLayout.H_ABORT_CLAIM, 0L, 1L)) {
            return;
        }
        byte[] msg = String.valueOf(reason.getMessage()).getBytes(StandardCharsets.UTF_8);
        int len = Math.min(msg.length, ShmLayout.REASON_BYTES);
        MemorySegment.copy(msg, 0, shm, ValueLayout.JAVA_BYTE, ShmLayout.H_REASON, len);
        shm.set(ValueLayout.JAVA_LONG, ShmLayout.H_REASON_LENGTH, len);
        LONG.setRelease(shm, ShmLayout.H_ABORT, rank() + 1L);
    }

    private String abortReason() {
        int len = (int) shm.get(ValueLayout.JAVA_LONG, ShmLayout.H_REASON_LENGTH);
        byte[] msg = new byte[Math.max(0, Math.min(len, ShmLayout.REASON_BYTES))];
        MemorySegment.copy(shm, ValueLayout.JAVA_BYTE, ShmLayout.H_REASON, msg, 0, msg.length);
        return new String(msg, StandardCharsets.UTF_8);
    }

    @Override
    protected void release() {
        try {
            if (rank() == 0) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            System.getLogger(ShmProcessGroup.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot remove shared-memory file " + file + ": " + e);
        }
        arena.close();
    }
}
