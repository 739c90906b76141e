package org.fleet4j.launch;

/**
 * A program that {@code fleetrun} runs by a short name ({@code bin/fleetrun mnist}), found through
 * {@link java.util.ServiceLoader} on the launcher's class path: the built-in programs of the examples module, and any
 * of a user's jar put on {@code CLASSPATH}. A program registers itself beside its code:
 * <pre>
 * &#64;AutoService(NamedProgram.class)
 * public final class Train implements NamedProgram {
 *     public String programName() { return "train"; }
 *     public static void main(String[] args) { ... }
 * }
 * </pre>
 * The launcher makes an instance only to ask its name; each rank runs the main class's {@code main}.
 */
public interface NamedProgram {
    /** The name fleetrun knows it by: lower case letters, digits and underscores. */
    String programName();

    /** The class whose {@code main} each rank runs; by default the registered class itself. */
    default String mainClass() {
        return getClass().getName();
    }
}
