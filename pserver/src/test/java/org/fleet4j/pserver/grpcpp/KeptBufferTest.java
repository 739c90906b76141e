package org.fleet4j.pserver.grpcpp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/**
 * A connection's kept buffer is lent again only once every user has released it: a large frame still held (a table
 * update in progress, a reply not yet written) is never written over by the next one, which gets memory of its own.
 * Fails if the kept buffer is lent without that check, or if it is not lent again at all.
 */
class KeptBufferTest {
    private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    private static final int LARGE = 3 << 20;

    @Test
    void aReleasedBufferIsLentAgainAndAHeldOneIsNotWrittenOver() {
        CopyCount counts = new CopyCount();
        KeptBuffer kept = new KeptBuffer(counts);
        ByteBuf first = kept.take(ALLOC, LARGE);
        assertEquals(LARGE, first.capacity());
        assertEquals(LARGE, first.writableBytes(), "empty, with room for exactly the frame");
        long address = first.memoryAddress();
        first.writeZero(LARGE);
        first.release();

        ByteBuf second = kept.take(ALLOC, LARGE - 100);
        assertEquals(address, second.memoryAddress(), "the released buffer is lent again");
        assertEquals(LARGE - 100, second.writableBytes());
        assertEquals(LARGE - 100, counts.keptAgainBytes());
        fill(second, (byte) 7);

        ByteBuf third = kept.take(ALLOC, LARGE);
        assertNotEquals(address, third.memoryAddress(), "the buffer still held by its user is not lent again");
        fill(third, (byte) 9);
        for (int i = 0; i < second.readableBytes(); i += 4099) {
            assertEquals(7, second.getByte(i), "byte " + i + " of the held frame");
        }
        assertEquals(LARGE - 100, counts.keptAgainBytes(), "only the one lending again is counted");
        ByteBuf secondRoot = second.unwrap();
        ByteBuf thirdRoot = third.unwrap();
        second.release();
        assertEquals(0, secondRoot.refCnt(), "replaced while its user held it, freed by that user's release");
        third.release();
        assertEquals(1, thirdRoot.refCnt(), "the new kept buffer, held by the connection only");
        kept.release();
        assertEquals(0, thirdRoot.refCnt(), "given up with the connection");
    }

    @Test
    void aUserStillHoldingTheBufferFreesItAfterTheConnectionGaveItUp() {
        KeptBuffer kept = new KeptBuffer(new CopyCount());
        ByteBuf held = kept.take(ALLOC, LARGE);
        fill(held, (byte) 3);
        ByteBuf root = held.unwrap();
        kept.release();
        assertEquals(1, root.refCnt(), "still the user's");
        assertEquals(3, held.getByte(LARGE - 1));
        held.release();
        assertEquals(0, root.refCnt(), "freed by the user's release");
    }

    @Test
    void smallAndHugeFramesAreNotKept() {
        CopyCount counts = new CopyCount();
        KeptBuffer kept = new KeptBuffer(counts);
        for (int bytes : new int[]{KeptBuffer.MIN_BYTES - 1, KeptBuffer.MAX_BYTES + 1}) {
            for (int i = 0; i < 2; i++) {
                ByteBuf b = kept.take(ALLOC, bytes);
                assertEquals(bytes, b.writableBytes());
                ByteBuf root = b.unwrap() == null ? b : b.unwrap();
                b.release();
                assertEquals(0, root.refCnt(), bytes + " bytes: freed at once, not kept");
            }
        }
        assertEquals(0, counts.keptAgainBytes());
        kept.release();
    }

    private static void fill(ByteBuf b, byte value) {
        while (b.isWritable()) {
            b.writeByte(value);
        }
    }
}
