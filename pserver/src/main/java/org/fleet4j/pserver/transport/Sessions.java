package org.fleet4j.pserver.transport;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.cluster.JobToken;

/**
 * A server's side of the job-token check. A session is 16 random bytes and 16 bytes of the token's HMAC over them and
 * a secret of this server process, so the server recognises its own sessions without remembering the ones it handed
 * out: a stranger calling Hello costs it nothing. A session's replay window is kept from its first call with a good
 * proof on; a session of an earlier run of the server (another secret) is refused.
 */
public final class Sessions {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int RANDOM_BYTES = CallProof.SESSION_BYTES / 2;

    private final JobToken token;
    private final byte[] processSecret = JobToken.nonce();
    private final Map<String, ReplayWindow> windows = new ConcurrentHashMap<>();

    public Sessions(JobToken token) {
        this.token = token;
    }

    /** A new session for a client (nothing is stored until it makes a call). */
    public byte[] open() {
        byte[] session = new byte[CallProof.SESSION_BYTES];
        byte[] random = new byte[RANDOM_BYTES];
        RANDOM.nextBytes(random);
        System.arraycopy(random, 0, session, 0, RANDOM_BYTES);
        System.arraycopy(tag(random), 0, session, RANDOM_BYTES, RANDOM_BYTES);
        return session;
    }

    /** The server's answer to a client's nonce: proof that it holds the token, bound to the session it opened. */
    public byte[] serverProof(byte[] clientNonce, byte[] session) {
        return token.proof(CallProof.SERVER, clientNonce, session);
    }

    /** Null when {@code header} proves the token for a call of {@code method}, else what is wrong with it. */
    public String check(byte[] header, String method) {
        CallProof call = CallProof.parse(header);
        if (call == null) {
            return "its job-token proof has " + header.length + " bytes, not " + CallProof.HEADER_BYTES;
        }
        String key = HexFormat.of().formatHex(call.session());
        ReplayWindow window = windows.get(key);
        if (window == null && !opened(call.session())) {
            return "its session was not opened by this server (a server restarted since, or a forged session)";
        }
        if (!call.madeWith(token, method)) {
            return "its proof was not made with this job's token (a process of another job, or a different token)";
        }
        if (window == null) {
            window = windows.computeIfAbsent(key, k -> new ReplayWindow());
        }
        if (!window.accept(call.sequence())) {
            return "call " + call.sequence() + " of its session was seen before (a replayed call)";
        }
        return null;
    }

    private boolean opened(byte[] session) {
        byte[] random = Arrays.copyOfRange(session, 0, RANDOM_BYTES);
        return MessageDigest.isEqual(tag(random), Arrays.copyOfRange(session, RANDOM_BYTES, CallProof.SESSION_BYTES));
    }

    private byte[] tag(byte[] random) {
        return Arrays.copyOf(token.proof(CallProof.SESSION, processSecret, random), RANDOM_BYTES);
    }
}
