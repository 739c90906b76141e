package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.fleet4j.pserver.grpc.GrpcTransport.ControlConnection;
import org.fleet4j.pserver.transport.PsBatch;
import org.fleet4j.pserver.transport.PsException;

/**
 * The bodies of a step's PULL_MANY and PUSH_MANY frames on a worker ({@link Frames} has their layout): the names and
 * counts in small direct buffers, the ids and gradients wrapped from the caller's memory, all in one composite, so a
 * whole step for one server goes out as one frame without a copy; and the reply's rows put back into the batch.
 */
final class StepFrames {
    /** A server's blocks and tables as Hello told them: the sizes that a reply's entries have. */
    record Sizes(Map<String, Long> denseNumel, Map<String, Integer> sparseDims) {
        long denseBytes(String what, PsBatch.Dense d) {
            Long numel = denseNumel.get(ControlConnection.blockKey(d.param(), d.block()));
            if (numel == null) {
                throw new PsException(what + ": the server holds no block " + d.block() + " of dense parameter "
                        + d.param());
            }
            return numel * Float.BYTES;
        }

        int dim(String what, PsBatch.Sparse t) {
            Integer dim = sparseDims.get(t.table());
            if (dim == null) {
                throw new PsException(what + ": the server holds no sparse table " + t.table());
            }
            return dim;
        }
    }

    private StepFrames() {
    }

    static ByteBuf pullBody(DataChannel c, PsBatch batch, String what) {
        CompositeByteBuf body = Unpooled.compositeBuffer(2 + 2 * batch.sparse().size());
        try {
            return fillPull(c, batch, what, body);
        } catch (RuntimeException e) {
            body.release();
            throw e;
        }
    }

    private static ByteBuf fillPull(DataChannel c, PsBatch batch, String what, CompositeByteBuf body) {
        int denseHead = Integer.BYTES * 2;
        for (PsBatch.Dense d : batch.dense()) {
            denseHead += Frames.nameBytes(d.param()) + Integer.BYTES;
        }
        ByteBuf head = c.alloc(denseHead);
        head.writeInt(batch.dense().size());
        for (PsBatch.Dense d : batch.dense()) {
            Frames.writeName(head, d.param());
            head.writeInt(d.block());
        }
        head.writeInt(batch.sparse().size());
        body.addComponent(true, head);
        for (PsBatch.Sparse t : batch.sparse()) {
            requireBytes(what, "ids of " + t.table(), t.ids(), (long) t.n() * Long.BYTES);
            ByteBuf table = c.alloc(Frames.nameBytes(t.table()) + Integer.BYTES);
            Frames.writeName(table, t.table());
            table.writeInt(t.n());
            body.addComponent(true, table);
            if (t.n() > 0) {
                body.addComponent(true, c.wrap(t.ids(), (long) t.n() * Long.BYTES));
            }
        }
        return body;
    }

    static ByteBuf pushBody(DataChannel c, PsBatch batch, Sizes sizes, String what) {
        CompositeByteBuf body = Unpooled.compositeBuffer(2 + 3 * (batch.dense().size() + batch.sparse().size()));
        try {
            return fillPush(c, batch, sizes, what, body);
        } catch (RuntimeException e) {
            body.release();
            throw e;
        }
    }

    private static ByteBuf fillPush(DataChannel c, PsBatch batch, Sizes sizes, String what, CompositeByteBuf body) {
        ByteBuf count = c.alloc(Integer.BYTES);
        body.addComponent(true, count.writeInt(batch.dense().size()));
        for (PsBatch.Dense d : batch.dense()) {
            long bytes = sizes.denseBytes(what, d);
            requireBytes(what, "gradient of dense " + d.param() + " block " + d.block(), d.values(), bytes);
            ByteBuf head = c.alloc(Frames.nameBytes(d.param()) + 2 * Integer.BYTES);
            Frames.writeName(head, d.param());
            head.writeInt(d.block()).writeInt(Math.toIntExact(bytes / Float.BYTES));
            body.addComponents(true, head, c.wrap(d.values(), bytes));
        }
        ByteBuf tables = c.alloc(Integer.BYTES);
        body.addComponent(true, tables.writeInt(batch.sparse().size()));
        for (PsBatch.Sparse t : batch.sparse()) {
            int dim = sizes.dim(what, t);
            long idBytes = (long) t.n() * Long.BYTES;
            long rowBytes = (long) t.n() * dim * Float.BYTES;
            requireBytes(what, "ids of " + t.table(), t.ids(), idBytes);
            requireBytes(what, "gradients of " + t.table(), t.rows(), rowBytes);
            ByteBuf head = c.alloc(Frames.nameBytes(t.table()) + 2 * Integer.BYTES);
            Frames.writeName(head, t.table());
            head.writeInt(t.n()).writeInt(dim);
            body.addComponent(true, head);
            if (t.n() > 0) {
                body.addComponents(true, c.wrap(t.ids(), idBytes), c.wrap(t.rows(), rowBytes));
            }
        }
        return body;
    }

    /** A PULL_MANY reply's values and rows into the batch's buffers, in the request's order. */
    static void scatter(ByteBuf reply, PsBatch batch, Sizes sizes, String what) {
        long expected = 0;
        for (PsBatch.Dense d : batch.dense()) {
            expected += sizes.denseBytes(what, d);
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            expected += (long) t.n() * sizes.dim(what, t) * Float.BYTES;
        }
        if (reply.readableBytes() != expected) {
            throw new PsException(what + ": the reply holds " + reply.readableBytes() + " bytes, the batch needs "
                    + expected);
        }
        MemorySegment in = MemorySegment.ofBuffer(reply.nioBuffer());
        long at = 0;
        for (PsBatch.Dense d : batch.dense()) {
            long bytes = sizes.denseBytes(what, d);
            at = copy(what, in, at, d.values(), bytes, "dense " + d.param() + " block " + d.block());
        }
        for (PsBatch.Sparse t : batch.sparse()) {
            long bytes = (long) t.n() * sizes.dim(what, t) * Float.BYTES;
            at = copy(what, in, at, t.rows(), bytes, "sparse table " + t.table());
        }
    }

    private static long copy(String what, MemorySegment in, long at, MemorySegment out, long bytes, String entry) {
        requireBytes(what, "output of " + entry, out, bytes);
        MemorySegment.copy(in, at, out, 0, bytes);
        return at + bytes;
    }

    private static void requireBytes(String what, String name, MemorySegment segment, long bytes) {
        if (segment.byteSize() < bytes) {
            throw new PsException(what + ": the " + name + " buffer holds " + segment.byteSize() + " bytes, "
                    + bytes + " are needed");
        }
    }
}
