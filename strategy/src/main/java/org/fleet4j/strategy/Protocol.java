package org.fleet4j.strategy;

import org.fleet4j.strategy.schema.Spelled;
import org.fleet4j.text.Quoted;

/** Parameter-server transport (the protocol field). */
public enum Protocol implements Spelled {
    GRPC("grpc"),
    GRPC_PLUS_PLUS("grpc++"),
    STAR_SERVER("star_server"),
    STAR_SERVER_LITE("star_server_lite");

    private final String spelling;

    Protocol(String spelling) {
        this.spelling = spelling;
    }

    @Override
    public String spelling() {
        return spelling;
    }

    /** The constant whose file spelling is given (the schema has already checked it). */
    public static Protocol of(String spelling) {
        for (Protocol value : values()) {
            if (value.spelling.equals(spelling)) {
                return value;
            }
        }
        throw new IllegalArgumentException("no Protocol is spelt " + Quoted.of(spelling));
    }
}
