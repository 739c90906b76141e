package org.fleet4j.fleet.tensorboard;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * TFRecord framing, the container of TensorBoard event files: each record is its length (uint64), the masked CRC32C of
 * those 8 bytes (uint32), the data, and the masked CRC32C of the data (uint32), every number little-endian. The mask
 * keeps a CRC of data that itself holds CRCs from being a CRC of a CRC.
 */
final class TfRecords {
    private static final int MASK_DELTA = 0xa282ead8;

    private TfRecords() {
    }

    /** {@code data} as one framed record. */
    static byte[] frame(byte[] data) {
        ByteBuffer record = ByteBuffer.allocate(8 + 4 + data.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        record.putLong(data.length);
        record.putInt(maskedCrc32c(record.array(), 0, 8));
        record.put(data);
        record.putInt(maskedCrc32c(data, 0, data.length));
        return record.array();
    }

    static int maskedCrc32c(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        int c = (int) crc.getValue();
        return ((c >>> 15) | (c << 17)) + MASK_DELTA;
    }
}
