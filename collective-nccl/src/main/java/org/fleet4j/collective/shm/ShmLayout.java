package org.fleet4j.collective.shm;

/**
 * Byte layout of a group's shared segment. Every flag sits on its own cache line so that ranks spinning on one
 * flag do not slow down the rank writing another.
 * <pre>
 * header   magic, size, ranks, slot bytes, mailbox bytes; abort (rank + 1 of the first rank that failed) and
 *          that rank's error message, so the others can say why
 * control  per rank: pid | arrived + seq + fingerprint + registered region | reduced | done   (256 bytes each)
 * slots    per rank: slotBytes of staging for one pipeline round            (page aligned)
 * mailbox  per ordered pair (src, dst): posted + fingerprint | acked | data  (point-to-point)
 * </pre>
 */
final class ShmLayout {
    static final long MAGIC = 0x464C45455453484DL; // "FLEETSHM"
    static final long H_MAGIC = 0;
    static final long H_SIZE = 8;
    static final long H_RANKS = 16;
    static final long H_SLOT = 24;
    static final long H_MBOX = 32;
    static final long H_ABORT = 64;
    static final long H_ABORT_CLAIM = 72;
    static final long H_REASON_LENGTH = 80;
    static final long H_REASON = 1024;
    static final int REASON_BYTES = 2048;
    static final long HEADER = 4096;

    static final long CTRL_STRIDE = 256;
    static final long C_PID = 0;
    static final long C_ARRIVED = 64;
    static final long C_SEQ = 72;
    static final long C_FP_HIGH = 80;
    static final long C_FP_LOW = 88;
    /** Which registered region (or -1) and offset in it the rank's allreduce buffer lies at, published on arrival. */
    static final long C_REGION = 96;
    static final long C_REGION_OFFSET = 104;
    static final long C_REDUCED = 128;
    static final long C_DONE = 192;

    static final long MBOX_HEADER = 256;
    static final long M_POSTED = 0;
    static final long M_SEQ = 8;
    static final long M_FP_HIGH = 16;
    static final long M_FP_LOW = 24;
    static final long M_BYTES = 32;
    static final long M_ACKED = 128;

    final int ranks;
    final long slotBytes;
    final long mboxBytes;
    final long slotsBase;
    final long mboxBase;
    final long size;

    ShmLayout(int ranks, long slotBytes, long mboxBytes) {
        this.ranks = ranks;
        this.slotBytes = slotBytes;
        this.mboxBytes = mboxBytes;
        this.slotsBase = alignPage(HEADER + ranks * CTRL_STRIDE);
        this.mboxBase = slotsBase + ranks * slotBytes;
        this.size = mboxBase + (long) ranks * ranks * (MBOX_HEADER + mboxBytes);
    }

    long ctrl(int rank) {
        return HEADER + rank * CTRL_STRIDE;
    }

    long slot(int rank) {
        return slotsBase + rank * slotBytes;
    }

    long mailbox(int src, int dst) {
        return mboxBase + ((long) src * ranks + dst) * (MBOX_HEADER + mboxBytes);
    }

    private static long alignPage(long x) {
        return (x + 4095) & ~4095L;
    }
}
