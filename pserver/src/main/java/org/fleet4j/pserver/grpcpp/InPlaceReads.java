package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * A channel's read buffers, with one exception: while its {@link FrameAssembler} is part way through a large body,
 * the next read goes straight into that body's own memory ({@link FrameAssembler#readTarget()}), so the kernel's copy
 * out of the socket is the only one; a fused step's 5.7 MB of dense gradients arrive over about a hundred reads,
 * and gathering them was another pass over every byte. Otherwise Netty's own allocator decides, as before.
 */
final class InPlaceReads implements RecvByteBufAllocator {
    private final RecvByteBufAllocator usual;
    private final FrameAssembler assembler;

    private InPlaceReads(RecvByteBufAllocator usual, FrameAssembler assembler) {
        this.usual = usual;
        this.assembler = assembler;
    }

    /** Makes {@code channel}'s reads fill {@code assembler}'s bodies in place. Before the channel's first read. */
    static void install(Channel channel, FrameAssembler assembler) {
        ChannelConfig config = channel.config();
        config.setRecvByteBufAllocator(new InPlaceReads(config.getRecvByteBufAllocator(), assembler));
    }

    @Override
    public Handle newHandle() {
        return new InPlaceHandle((ExtendedHandle) usual.newHandle(), assembler);
    }

    private record InPlaceHandle(ExtendedHandle usual, FrameAssembler assembler) implements ExtendedHandle {
        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = assembler.readTarget();
            return target != null ? target : usual.allocate(alloc);
        }

        @Override
        public int guess() {
            return usual.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            usual.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            usual.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            usual.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return usual.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            usual.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return usual.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return usual.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return usual.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            usual.readComplete();
        }
    }
}
