package org.fleet4j.collective.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.AbstractProcessGroup;
import org.fleet4j.collective.group.GroupContext;
import org.fleet4j.collective.group.OpCall;

/**
 * Collectives over TCP for ranks on different hosts. Allreduce is a ring reduce-scatter followed by a ring
 * allgather, queued as one {@link Exchange}: every segment travels in chunks, a chunk is forwarded as soon as it has
 * been reduced, and a chunk of this rank's own segment starts its allgather as soon as its reduction is final, so
 * all links stay busy at once and the two phases overlap. Broadcast and reduce are pipelined chains around the
 * same ring.
 */
public final class TcpProcessGroup extends AbstractProcessGroup {
    /**
     * Largest allreduce that two ranks do by swapping whole buffers ({@link #swapAllreduce}): twice the bytes of
     * the ring's reduce-scatter + allgather, in one round trip instead of two.
     */
    static final int SWAP_MAX_BYTES = 64 << 10;
    private final TcpTransport transport;

    /** Which elements of a buffer form segment j of the ring. */
    private interface Segments {
        long first(int j);

        long count(int j);
    }

    public TcpProcessGroup(GroupContext ctx) {
        super(ctx);
        this.transport = size() > 1 ? new TcpTransport(ctx) : null;
    }

    @Override
    public Backend backend() {
        return Backend.TCP;
    }

    /** The connections, for tests in this package; null for a group of one. */
    TcpTransport transport() {
        return transport;
    }

    private int mod(int x) {
        return Math.floorMod(x, size());
    }

    private long chunkElems(DataType dtype) {
        return Math.max(1, ctx.options().tcpChunkBytes() / dtype.byteSize());
    }

    private Segments balanced(long count) {
        int n = size();
        return new Segments() {
            public long first(int j) {
                return count * j / n;
            }

            public long count(int j) {
                return count * (j + 1) / n - count * j / n;
            }
        };
    }

    private Segments blocks(long perRank) {
        return new Segments() {
            public long first(int j) {
                return perRank * j;
            }

            public long count(int j) {
                return perRank;
            }
        };
    }

    private Exchange exchange(OpCall call, int from, int to) {
        return new Exchange(transport, call, from, to, System.nanoTime() + ctx.options().timeout().toNanos(),
                stallWarning());
    }

    /** Ring exchange with the left neighbour's data coming in and this rank's going to the right. */
    private Exchange ring(OpCall call) {
        return exchange(call, mod(rank() - 1), mod(rank() + 1));
    }

    /** What to do with each chunk of a range: its byte offset and length. */
    private interface ChunkAction {
        void at(long offset, int bytes);
    }

    private void chunks(OpCall call, long first, long count, ChunkAction action) {
        int es = call.dtype().byteSize();
        long chunk = chunkElems(call.dtype());
        for (long p = 0; p < count; p += chunk) {
            long elems = Math.min(chunk, count - p);
            action.at((first + p) * es, (int) (elems * es));
        }
    }

    @Override
    protected void runAllreduce(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        int divideBy = call.op() == ReduceOp.AVG ? size() : 1;
        long bytes = call.count() * call.dtype().byteSize();
        if (size() == 2 && bytes <= SWAP_MAX_BYTES) {
            swapAllreduce(call, buffer, divideBy);
            return;
        }
        Segments seg = balanced(call.count());
        Exchange x = ring(call);
        int ownReduced = ringReduceScatter(x, call, buffer, seg, divideBy);
        ringAllgather(x, call, buffer, seg, ownReduced);
        x.run();
    }

    /**
     * Two ranks swap whole buffers and each reduces the other's into its own: one message latency instead of the
     * ring's two. Both get bit-identical results because every reduce op is commutative. This rank's values are
     * sent from a copy, so that reducing a chunk that has arrived can never change one still being sent.
     */
    private void swapAllreduce(OpCall call, MemorySegment buffer, int divideBy) {
        int peer = 1 - rank();
        MemorySegment copy = transport.swapCopy(buffer);
        Exchange x = exchange(call, peer, peer);
        chunks(call, 0, call.count(), (off, bytes) -> {
            x.send(copy, off, bytes, 0);
            x.receiveReduce(buffer, off, bytes, divideBy);
        });
        x.run();
    }

    /**
     * Queues the ring reduce-scatter: afterwards segment r of {@code buf} on rank r holds the reduction over all
     * ranks (divided by {@code divideBy}). Returns how many receives precede the first one that completes a chunk
     * of segment r, so that the allgather can send each such chunk on as soon as it is final.
     */
    private int ringReduceScatter(Exchange x, OpCall call, MemorySegment buf, Segments seg, int divideBy) {
        int n = size();
        int r = rank();
        chunks(call, seg.first(mod(r - 1)), seg.count(mod(r - 1)), (off, bytes) -> x.send(buf, off, bytes, 0));
        int beforeOwn = 0;
        for (int s = 0; s < n - 1; s++) {
            int k = mod(r - s - 2);
            boolean last = s == n - 2;
            if (last) {
                beforeOwn = x.receiveCount();
            }
            chunks(call, seg.first(k), seg.count(k), (off, bytes) -> {
                int done = x.receiveReduce(buf, off, bytes, last ? divideBy : 1);
                if (!last) {
                    x.send(buf, off, bytes, done);
                }
            });
        }
        return beforeOwn;
    }

    /**
     * Queues the ring allgather: given segment r complete on rank r, makes every segment complete everywhere.
     * Chunk c of segment r goes out once {@code ownReady + c + 1} receives are done ({@code ownReady} < 0: at once).
     */
    private void ringAllgather(Exchange x, OpCall call, MemorySegment buf, Segments seg, int ownReady) {
        int n = size();
        int r = rank();
        int[] c = {0};
        chunks(call, seg.first(r), seg.count(r), (off, bytes) -> x.send(buf, off, bytes, ownReady < 0 ? 0 : ownReady + ++c[0]));
        for (int s = 0; s < n - 1; s++) {
            int k = mod(r - s - 1);
            boolean forward = s < n - 2;
            chunks(call, seg.first(k), seg.count(k), (off, bytes) -> {
                int done = x.receiveCopy(buf, off, bytes);
                if (forward) {
                    x.send(buf, off, bytes, done);
                }
            });
        }
    }

    @Override
    protected void runBroadcast(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        // a chain from the root around the ring, each chunk forwarded as soon as it has arrived
        int pos = mod(rank() - call.root());
        Exchange x = exchange(call, pos == 0 ? -1 : mod(rank() - 1), pos == size() - 1 ? -1 : mod(rank() + 1));
        chunks(call, 0, call.count(), (off, bytes) -> {
            if (pos == 0) {
                x.send(buffer, off, bytes, 0);
            } else {
                int done = x.receiveCopy(buffer, off, bytes);
                if (pos < size() - 1) {
                    x.send(buffer, off, bytes, done);
                }
            }
        });
        x.run();
    }

    @Override
    protected void runReduce(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        // the chain starts right after the root and ends at it; ranks on the way reduce into a copy, not their buffer
        int pos = mod(rank() - call.root() - 1);
        boolean root = rank() == call.root();
        Exchange x = exchange(call, pos == 0 ? -1 : mod(rank() - 1), root ? -1 : mod(rank() + 1));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = buffer;
            if (pos > 0 && !root) {
                target = arena.allocate(buffer.byteSize(), 64);
                target.copyFrom(buffer);
            }
            MemorySegment t = target;
            int divideBy = root && call.op() == ReduceOp.AVG ? size() : 1;
            chunks(call, 0, call.count(), (off, bytes) -> {
                if (pos == 0) {
                    x.send(t, off, bytes, 0);
                } else {
                    int done = x.receiveReduce(t, off, bytes, divideBy);
                    if (!root) {
                        x.send(t, off, bytes, done);
                    }
                }
            });
            x.run();
        }
    }

    @Override
    protected void runAllgather(OpCall call, MemorySegment send, MemorySegment recv) {
        int es = call.dtype().byteSize();
        long bytes = call.count() * es;
        MemorySegment.copy(send, 0, recv, rank() * bytes, bytes);
        if (size() == 1 || call.count() == 0) {
            return;
        }
        Exchange x = ring(call);
        ringAllgather(x, call, recv, blocks(call.count()), -1);
        x.run();
    }

    @Override
    protected void runReduceScatter(OpCall call, MemorySegment send, MemorySegment recv) {
        int es = call.dtype().byteSize();
        long bytes = call.count() * es;
        if (size() == 1 || call.count() == 0) {
            MemorySegment.copy(send, rank() * bytes, recv, 0, bytes);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment work = arena.allocate(send.byteSize(), 64);
            work.copyFrom(send);
            Exchange x = ring(call);
            ringReduceScatter(x, call, work, blocks(call.count()), call.op() == ReduceOp.AVG ? size() : 1);
            x.run();
            MemorySegment.copy(work, rank() * bytes, recv, 0, bytes);
        }
    }

    @Override
    protected void runBarrier(OpCall call) {
        if (size() == 1) {
            return;
        }
        // a ring allreduce of one element per rank: nobody finishes before everyone has sent
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment token = arena.allocate(size() * 4L, 64);
            OpCall asData = new OpCall(call.kind(), DataType.I32, ReduceOp.SUM, -1, size(), call.seq());
            Segments seg = balanced(size());
            Exchange x = ring(asData);
            int ownReduced = ringReduceScatter(x, asData, token, seg, 1);
            ringAllgather(x, asData, token, seg, ownReduced);
            x.run();
        }
    }

    @Override
    protected void runSend(OpCall call, MemorySegment buffer, int dst) {
        Exchange x = exchange(call, -1, dst);
        chunks(call, 0, call.count(), (off, bytes) -> x.send(buffer, off, bytes, 0));
        x.run();
    }

    @Override
    protected void runRecv(OpCall call, MemorySegment buffer, int src) {
        Exchange x = exchange(call, src, -1);
        chunks(call, 0, call.count(), (off, bytes) -> x.receiveCopy(buffer, off, bytes));
        x.run();
    }

    @Override
    protected void abort(CollectiveException reason) {
        if (transport != null) {
            transport.abort(reason);
        }
    }

    @Override
    protected void release() {
        if (transport != null) {
            transport.close();
        }
    }
}
