/**
 * The strategy's knobs and their values: {@link StrategySchema}, the one table of every {@link Field} (key, type
 * {@link ValueKind}, default, {@link Constraint}, aliases, {@link FieldGroup}) with Paddle's names and defaults, which
 * parsing, validation, saving, storage and the dry run all read; {@link Setting}, {@link Origin} and {@link RawValue}
 * for what a file or Java set and where; {@link StrategyException} and {@link InvalidValueException} for the user; and
 * {@link KnobReader}, through which the parts of the runtime that act on knobs declare them ({@link KnobUse}), found by
 * ServiceLoader, so which knobs are in effect comes from the class path. The bottom of the module: it imports only the
 * JDK, no other package of it and nothing of the runtime. ({@link TextTable} formats the tables of the reports.)
 */
package org.fleet4j.strategy.schema;
