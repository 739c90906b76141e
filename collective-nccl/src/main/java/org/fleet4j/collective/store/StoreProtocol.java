package org.fleet4j.collective.store;

/** Wire constants of the store: every request starts with MAGIC and a command byte; replies start with a status. */
final class StoreProtocol {
    static final int MAGIC = 0x464C5354; // "FLST"
    static final byte HELLO = 1;
    static final byte SET = 2;
    static final byte GET = 3;
    static final byte WAIT = 4;
    static final byte ADD = 5;
    static final byte CAS = 6;

    static final byte OK = 0;
    static final byte TIMEOUT = 1;
    static final byte REJECTED = 2;

    /** Longest key or value accepted; a larger length on the wire means garbage, not a store client. */
    static final int MAX_FIELD_BYTES = 16 << 20;

    private StoreProtocol() {
    }
}
