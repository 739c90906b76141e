package org.fleet4j.collective.tcp;

import io.netty.buffer.ByteBuf;
import org.fleet4j.collective.AbstractProcessGroup;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupContext;
import org.fleet4j.collective.OpCall;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.reduce.Reductions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Collectives over TCP for ranks on different hosts. Allreduce is a ring reduce-scatter followed by a ring
 * allgather; every segment travels in chunks, and a chunk is forwarded as soon as it has been reduced, so all
 * links stay busy at once. Broadcast and reduce are pipelined chains around the same ring.
 */
public final class TcpProcessGroup extends AbstractProcessGroup {
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

    private int mod(int x) {
        return Math.floorMod(x, size());
    }

    private long deadline() {
        return System.nanoTime() + ctx.options().timeout().toNanos();
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

    @Override
    protected void runAllreduce(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        long deadline = deadline();
        Segments seg = balanced(call.count());
        ringReduceScatter(call, buffer, seg, deadline);
        if (call.op() == ReduceOp.AVG) {
            int es = call.dtype().byteSize();
            Reductions.divide(buffer, seg.first(rank()) * es, seg.count(rank()), call.dtype(), size());
        }
        ringAllgather(call, buffer, seg, deadline);
    }

    /** After this, segment r of {@code buf} on rank r holds the reduction over all ranks. */
    private void ringReduceScatter(OpCall call, MemorySegment buf, Segments seg, long deadline) {
        int n = size();
        int r = rank();
        int right = mod(r + 1);
        int left = mod(r - 1);
        int es = call.dtype().byteSize();
        long chunk = chunkElems(call.dtype());
        sendRange(right, call, buf, seg.first(mod(r - 1)), seg.count(mod(r - 1)));
        for (int s = 0; s < n - 1; s++) {
            int k = mod(r - s - 2);
            boolean forward = s < n - 2;
            for (long p = 0; p < seg.count(k); p += chunk) {
                long elems = Math.min(chunk, seg.count(k) - p);
                long off = (seg.first(k) + p) * es;
                ByteBuf frame = transport.receive(left, call, (int) (elems * es), deadline);
                try {
                    Reductions.combine(buf, off, payload(frame), 0, elems, call.dtype(), call.op());
                } finally {
                    frame.release();
                }
                if (forward) {
                    transport.send(right, call, buf, off, (int) (elems * es));
                }
            }
        }
    }

    /** Given segment r complete on rank r, makes every segment complete everywhere. */
    private void ringAllgather(OpCall call, MemorySegment buf, Segments seg, long deadline) {
        int n = size();
        int r = rank();
        int right = mod(r + 1);
        int left = mod(r - 1);
        int es = call.dtype().byteSize();
        long chunk = chunkElems(call.dtype());
        sendRange(right, call, buf, seg.first(r), seg.count(r));
        for (int s = 0; s < n - 1; s++) {
            int k = mod(r - s - 1);
            boolean forward = s < n - 2;
            for (long p = 0; p < seg.count(k); p += chunk) {
                long elems = Math.min(chunk, seg.count(k) - p);
                long off = (seg.first(k) + p) * es;
                receiveInto(left, call, buf, off, elems * es, deadline);
                if (forward) {
                    transport.send(right, call, buf, off, (int) (elems * es));
                }
            }
        }
    }

    private void sendRange(int peer, OpCall call, MemorySegment buf, long first, long count) {
        int es = call.dtype().byteSize();
        long chunk = chunkElems(call.dtype());
        for (long p = 0; p < count; p += chunk) {
            long elems = Math.min(chunk, count - p);
            transport.send(peer, call, buf, (first + p) * es, (int) (elems * es));
        }
    }

    private void receiveInto(int peer, OpCall call, MemorySegment buf, long offset, long bytes, long deadline) {
        ByteBuf frame = transport.receive(peer, call, (int) bytes, deadline);
        try {
            MemorySegment.copy(payload(frame), 0, buf, offset, bytes);
        } finally {
            frame.release();
        }
    }

    private static MemorySegment payload(ByteBuf frame) {
        return MemorySegment.ofBuffer(frame.nioBuffer(frame.readerIndex(), frame.readableBytes()));
    }

    @Override
    protected void runBroadcast(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        long deadline = deadline();
        int pos = mod(rank() - call.root());
        int es = call.dtype().byteSize();
        if (pos == 0) {
            sendRange(mod(rank() + 1), call, buffer, 0, call.count());
            return;
        }
        long chunk = chunkElems(call.dtype());
        for (long p = 0; p < call.count(); p += chunk) {
            long elems = Math.min(chunk, call.count() - p);
            receiveInto(mod(rank() - 1), call, buffer, p * es, elems * es, deadline);
            if (pos < size() - 1) {
                transport.send(mod(rank() + 1), call, buffer, p * es, (int) (elems * es));
            }
        }
    }

    @Override
    protected void runReduce(OpCall call, MemorySegment buffer) {
        if (size() == 1 || call.count() == 0) {
            return;
        }
        long deadline = deadline();
        // the chain starts right after the root and ends at it; non-roots reduce into scratch, not their buffer
        int pos = mod(rank() - call.root() - 1);
        int right = mod(rank() + 1);
        int left = mod(rank() - 1);
        int es = call.dtype().byteSize();
        boolean root = rank() == call.root();
        if (pos == 0) {
            sendRange(right, call, buffer, 0, call.count());
            return;
        }
        long chunk = chunkElems(call.dtype());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = root ? null : arena.allocate(Math.min(chunk, call.count()) * es, 64);
            for (long p = 0; p < call.count(); p += chunk) {
                long elems = Math.min(chunk, call.count() - p);
                MemorySegment target = root ? buffer : scratch;
                long off = root ? p * es : 0;
                if (!root) {
                    MemorySegment.copy(buffer, p * es, scratch, 0, elems * es);
                }
                ByteBuf frame = transport.receive(left, call, (int) (elems * es), deadline);
                try {
                    Reductions.combine(target, off, payload(frame), 0, elems, call.dtype(), call.op());
                } finally {
                    frame.release();
                }
                if (!root) {
                    transport.send(right, call, scratch, 0, (int) (elems * es));
                }
            }
        }
        if (root && call.op() == ReduceOp.AVG) {
            Reductions.divide(buffer, 0, call.count(), call.dtype(), size());
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
        ringAllgather(call, recv, blocks(call.count()), deadline());
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
            ringReduceScatter(call, work, blocks(call.count()), deadline());
            MemorySegment.copy(work, rank() * bytes, recv, 0, bytes);
        }
        if (call.op() == ReduceOp.AVG) {
            Reductions.divide(recv, 0, call.count(), call.dtype(), size());
        }
    }

    @Override
    protected void runBarrier(OpCall call) {
        if (size() == 1) {
            return;
        }
        // a one-element ring allreduce: nobody finishes before everyone has sent
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment token = arena.allocate(size() * 4L, 64);
            long deadline = deadline();
            OpCall asData = new OpCall(call.kind(), DataType.I32, ReduceOp.SUM, -1, size(), call.seq());
            Segments seg = balanced(size());
            ringReduceScatter(asData, token, seg, deadline);
            ringAllgather(asData, token, seg, deadline);
        }
    }

    @Override
    protected void runSend(OpCall call, MemorySegment buffer, int dst) {
        sendRange(dst, call, buffer, 0, call.count());
    }

    @Override
    protected void runRecv(OpCall call, MemorySegment buffer, int src) {
        long deadline = deadline();
        int es = call.dtype().byteSize();
        long chunk = chunkElems(call.dtype());
        for (long p = 0; p < call.count(); p += chunk) {
            long elems = Math.min(chunk, call.count() - p);
            receiveInto(src, call, buffer, p * es, elems * es, deadline);
        }
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
