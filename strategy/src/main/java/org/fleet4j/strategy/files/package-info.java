/**
 * Strategy files: {@link StrategyFormat} (YAML, JSON or Paddle's prototxt, by extension), their readers into
 * {@link RawEntry}s that keep each key's line ({@code JacksonStrategyReader} over Jackson's token stream,
 * {@code PrototxtReader}) and their writers of a strategy's settings ({@code JacksonStrategyWriter},
 * {@code PrototxtWriter}). It imports {@code .schema} and Jackson only: it reads and writes entries and settings, and
 * knows nothing of {@code DistributedStrategy}.
 */
package org.fleet4j.strategy.files;
