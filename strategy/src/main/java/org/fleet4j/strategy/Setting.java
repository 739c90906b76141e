package org.fleet4j.strategy;

/** A value the user set, and where it was set. */
record Setting(Object value, Origin origin) {
}
