package org.fleet4j.strategy.files;

import org.fleet4j.strategy.schema.RawValue;

/**
 * One key and its value as a file wrote it. {@code key} is dotted for nested keys; {@code line} is
 * where the key stands; {@code repeatable} marks formats where a repeated key extends a list
 * (prototxt), rather than being a mistake.
 */
public record RawEntry(String key, RawValue value, int line, boolean repeatable) {
}
