/**
 * The strategy as the user writes it: {@link DistributedStrategy}, every knob of Paddle Fleet's DistributedStrategy set
 * in Java or loaded from a file, holding only what was set and where; its groups ({@link BuildStrategy},
 * {@link ExecutionStrategy}, {@link AmpConfigs}, {@link GradientMergeConfigs}, ...) that write through to it; the
 * choices {@link Mode}, {@link Protocol} and {@link ScaleStrategy}; {@code StrategyBinder}, which turns a file's raw
 * entries into settings; {@link ConsistencyRules} for contradictions whatever the world; and the immutable
 * {@link StrategySnapshot} handed to the compiler and the runtime. It imports {@code .schema} and {@code .files} only,
 * and nothing of the runtime.
 */
package org.fleet4j.strategy;
