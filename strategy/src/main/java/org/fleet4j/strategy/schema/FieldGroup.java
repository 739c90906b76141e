package org.fleet4j.strategy.schema;

/**
 * A nested block of fields ({@code amp_configs}, {@code build_strategy}, ...). {@code enabledBy} is
 * the switch without which the group has no effect (amp for amp_configs), or null when always used.
 */
public record FieldGroup(String name, String doc, Field<Boolean> enabledBy) {
}
