package org.fleet4j.cluster;

/**
 * Wire constants of the store: every request starts with MAGIC and a command byte; replies start with a status.
 * A connection opens with a mutual challenge-response, so the job token never crosses the wire:
 * <ol>
 *   <li>client: MAGIC, HELLO, job id (length-prefixed), its nonce</li>
 *   <li>server: REJECTED (another job id), or CHALLENGE, its nonce, HMAC(token, SERVER_PROOF, job, client nonce,
 *       server nonce); the client goes no further unless that proof checks out</li>
 *   <li>client: HMAC(token, CLIENT_PROOF, job, server nonce, client nonce)</li>
 *   <li>server: OK, or REJECTED and the connection is closed</li>
 * </ol>
 */
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
    static final byte CHALLENGE = 3;

    static final String SERVER_PROOF = "fleet4j-store-server";
    static final String CLIENT_PROOF = "fleet4j-store-client";

    /** Longest key or value accepted; a larger length on the wire means garbage, not a store client. */
    static final int MAX_FIELD_BYTES = 16 << 20;

    private StoreProtocol() {
    }
}
