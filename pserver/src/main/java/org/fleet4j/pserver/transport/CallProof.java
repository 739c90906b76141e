package org.fleet4j.pserver.transport;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.ByteBuffer;
import org.fleet4j.cluster.JobToken;

/**
 * The proof of the job token that every call but Hello carries (the grpc protocol in its {@code fleet4j-auth-bin}
 * metadata, grpc++ in its frame header): the session the server opened, a sequence number new to that session, and an HMAC-SHA256 with the token over both and
 * the method's name. The token never travels, a proof is good for one method once, and a session for one server.
 */
public record CallProof(byte[] session, long sequence, byte[] proof) {
    public static final int SESSION_BYTES = 32;
    public static final int HEADER_BYTES = SESSION_BYTES + Long.BYTES + JobToken.PROOF_BYTES;
    /** HMAC purposes, each its own so that no proof made for one can pass for another. */
    public static final String CALL = "fleet4j-ps-call";
    public static final String SERVER = "fleet4j-ps-server";
    public static final String SESSION = "fleet4j-ps-session";

    /** The header value a client sends with call number {@code sequence} of {@code method}. */
    public static byte[] header(JobToken token, byte[] session, long sequence, String method) {
        return ByteBuffer.allocate(HEADER_BYTES)
                .put(session)
                .putLong(sequence)
                .put(token.proof(CALL, session, sequenceBytes(sequence), method.getBytes(UTF_8)))
                .array();
    }

    /** The proof in a header value; null when it is not {@link #HEADER_BYTES} long. */
    public static CallProof parse(byte[] header) {
        if (header.length != HEADER_BYTES) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(header);
        byte[] session = new byte[SESSION_BYTES];
        b.get(session);
        long sequence = b.getLong();
        byte[] proof = new byte[JobToken.PROOF_BYTES];
        b.get(proof);
        return new CallProof(session, sequence, proof);
    }

    public boolean madeWith(JobToken token, String method) {
        return token.verifies(proof, CALL, session, sequenceBytes(sequence),
                method.getBytes(UTF_8));
    }

    private static byte[] sequenceBytes(long sequence) {
        return ByteBuffer.allocate(Long.BYTES).putLong(sequence).array();
    }
}
