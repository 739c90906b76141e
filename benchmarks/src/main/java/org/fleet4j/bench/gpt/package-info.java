/**
 * {@link GptRecipeInputs}: the files the gpt accuracy comparison (scripts/bench/gpt_accuracy_vs_torch.sh) gives both
 * frameworks, so that they train on the same characters and batches and validate on the same windows. It imports
 * fleet-core's {@code data}, {@code io} and {@code tensor}.
 */
package org.fleet4j.bench.gpt;
