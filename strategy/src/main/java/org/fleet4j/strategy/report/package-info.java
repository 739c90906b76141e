/**
 * The strategy side of {@code fleetrun --dry_run}: {@link StrategyCli} describes the world and the effective strategy
 * and starts nothing; {@code DryRunReport} prints it as a table for people or one JSON object for programs. It writes
 * only to the streams it is given and returns an exit status instead of exiting. It imports the root package,
 * {@code .rules}, {@code .schema} and Jackson; nothing in the module imports it.
 */
package org.fleet4j.strategy.report;
