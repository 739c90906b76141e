/**
 * TensorBoard event files: {@link org.fleet4j.fleet.tensorboard.SummaryWriter} writes scalars (a tag, a value and a
 * step) as the Event records TensorBoard reads, in TFRecord framing ({@code TfRecords}); the messages come from
 * {@code src/main/protobuf/tensorboard/event.proto}. Nothing here knows of jobs or ranks: the programs decide who
 * writes (see {@code org.fleet4j.fleet.metrics.StepMetrics}).
 */
package org.fleet4j.fleet.tensorboard;
