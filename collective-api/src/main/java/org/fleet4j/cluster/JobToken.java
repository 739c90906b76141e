package org.fleet4j.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret that every process of one job holds and nobody else does. It never travels: a store or data connection
 * proves it with an HMAC-SHA256 over a fresh nonce ({@link #proof}), so a stranger who knows the job id and the ports
 * still cannot read or change anything. The launcher hands it to its ranks in {@link #ENV}; a user supplies it for a
 * job on several hosts, in that variable or in a file only they can read ({@link #FILE_ENV}, {@link #fromFile}). A job
 * of several processes without one is refused, unless the user opts out ({@link #INSECURE_ENV}).
 */
public final class JobToken {
    public static final String ENV = "FLEET_JOB_TOKEN";
    public static final String FILE_ENV = "FLEET_JOB_TOKEN_FILE";
    /** Set to 1, it lets a job of several processes run without a token, unprotected (a warning on every process). */
    public static final String INSECURE_ENV = "FLEET_INSECURE";
    /** Shorter secrets are refused: they could be guessed. 32 random bytes in base64 are 44 characters. */
    public static final int MIN_CHARS = 16;
    /** Bytes of a challenge nonce and of a proof (HMAC-SHA256). */
    public static final int NONCE_BYTES = 32;
    public static final int PROOF_BYTES = 32;
    public static final String HOW_TO_MAKE =
            "generate one with: head -c 32 /dev/urandom | base64 > job.token; chmod 600 job.token";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String text;
    /**
     * Each thread's HMAC, keyed with the token once: {@code Mac.getInstance} and {@code init} cost more than the
     * HMAC of a call's few bytes, and a parameter server checks a proof on every data frame. {@code doFinal} leaves
     * the Mac ready for the next proof.
     */
    private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

    private JobToken(String text) {
        this.text = text;
    }

    /** A fresh token of 32 random bytes, for a job whose ranks all descend from one launcher. */
    public static JobToken random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return new JobToken(Base64.getEncoder().encodeToString(b));
    }

    /** The token given as text ({@code source} names where it came from, for the error). */
    public static JobToken of(String text, String source) {
        String t = text == null ? "" : text.strip();
        if (t.length() < MIN_CHARS) {
            throw new IllegalArgumentException("the job token in " + source + " has " + t.length() + " characters; at least "
                    + MIN_CHARS + " are needed so that it cannot be guessed (" + HOW_TO_MAKE + ")");
        }
        return new JobToken(t);
    }

    /** Reads the token from {@code file}, which only its owner may read (mode 0600 or 0400). */
    public static JobToken fromFile(Path file, String source) {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(source + " " + file + ": no such file (" + HOW_TO_MAKE + ")");
        }
        try {
            if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
                if (perms.stream().anyMatch(p -> !p.name().startsWith("OWNER_"))) {
                    throw new IllegalArgumentException(source + " " + file + " can be read or written by others (mode "
                            + mode(perms) + "); a job token must be private: chmod 600 " + file);
                }
            }
            return of(Files.readString(file, StandardCharsets.UTF_8), source + " " + file);
        } catch (IOException e) {
            throw new IllegalArgumentException(source + " " + file + ": cannot read it (" + e.getMessage() + ")", e);
        }
    }

    /**
     * The token of one process of a job of {@code processes} processes: {@link #ENV}, else the file named by
     * {@link #FILE_ENV}. A job of one process may go without (it gets a random token, as nobody else must join it); a
     * larger job may not, since every process must hold the same secret, unless {@link #INSECURE_ENV}{@code =1} opts
     * out: its processes then share a token derived from {@code publicFacts} (what every process of the job knows
     * alike, such as its endpoints), which anyone who knows those facts can derive too, and {@code warn} is told so.
     */
    public static JobToken fromEnvironment(Map<String, String> env, int processes, String publicFacts,
                                           Consumer<String> warn) {
        String text = env.get(ENV);
        if (text != null) {
            return of(text, "environment variable " + ENV);
        }
        String file = env.get(FILE_ENV);
        if (file != null) {
            return fromFile(Path.of(file), "environment variable " + FILE_ENV + ":");
        }
        if (processes == 1) {
            return random();
        }
        if (insecure(env)) {
            warn.accept(INSECURE_ENV + "=1: this job of " + processes + " processes runs without a job token: any process"
                    + " that reaches its ports can join it, read and change its state (its token is derived from its"
                    + " endpoints, which are no secret); give every process the same " + ENV + " or " + FILE_ENV
                    + " instead (" + HOW_TO_MAKE + ")");
            return derived(publicFacts);
        }
        throw new IllegalArgumentException("no job token: a job of " + processes + " processes needs the same secret in"
                + " every process, in " + ENV + " or in a file named by " + FILE_ENV + "; bin/fleetrun sets it for its"
                + " processes, other launchers (torchrun, mpirun, Slurm, Paddle's) pass on what you export ("
                + HOW_TO_MAKE + "; export " + FILE_ENV + "=job.token), or set " + INSECURE_ENV + "=1 to run the job"
                + " unprotected");
    }

    /** Whether the user opted out of the token: {@link #INSECURE_ENV}{@code =1}. */
    public static boolean insecure(Map<String, String> env) {
        return "1".equals(env.get(INSECURE_ENV));
    }

    /** The same token in every process that is given the same facts. */
    private static JobToken derived(String publicFacts) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(("fleet4j-insecure-job\n" + publicFacts).getBytes(StandardCharsets.UTF_8));
            return new JobToken(Base64.getEncoder().encodeToString(digest));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** A fresh random challenge. */
    public static byte[] nonce() {
        byte[] b = new byte[NONCE_BYTES];
        RANDOM.nextBytes(b);
        return b;
    }

    /** HMAC-SHA256 of the parts, each length-prefixed so that no two different lists hash the same bytes. */
    public byte[] proof(String purpose, byte[]... parts) {
        Mac mac = macs.get();
        update(mac, purpose.getBytes(StandardCharsets.UTF_8));
        for (byte[] part : parts) {
            update(mac, part);
        }
        return mac.doFinal();
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(text.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
        }
    }

    /** Whether {@code proof} was made with this token over the same parts; constant time. */
    public boolean verifies(byte[] proof, String purpose, byte[]... parts) {
        return MessageDigest.isEqual(proof, proof(purpose, parts));
    }

    /** The secret itself, for the launcher to put in its ranks' environment; never log it. */
    public String text() {
        return text;
    }

    private static void update(Mac mac, byte[] part) {
        int n = part.length;
        mac.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        mac.update(part);
    }

    private static String mode(Set<PosixFilePermission> perms) {
        int mode = 0;
        for (PosixFilePermission p : perms) {
            mode |= 1 << (8 - p.ordinal());
        }
        return String.format("0%03o", mode);
    }

    @Override
    public String toString() {
        return "JobToken[hidden]";
    }
}
