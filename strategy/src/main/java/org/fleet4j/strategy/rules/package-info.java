/**
 * The effective strategy for a world: {@link EffectiveStrategy#resolve} applies Paddle Fleet's rules for the
 * {@link World} (nodes, ranks per node, device kind) to a strategy ({@code WorldRules}), recording each {@link Change}
 * with its reason, and warns of every setting that will not act as asked ({@code WarningRules},
 * {@link StrategyWarning}). It imports the module's root package and {@code .schema}, and nothing of the runtime: the
 * world is given, not detected.
 */
package org.fleet4j.strategy.rules;
