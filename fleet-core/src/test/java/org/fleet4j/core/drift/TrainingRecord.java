package org.fleet4j.core.drift;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** What a training ended with and went through: its float32 parameters by name, and the loss of every step. */
public record TrainingRecord(Map<String, float[]> parameters, double[] losses) {
    public TrainingRecord {
        parameters = Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
        losses = losses.clone();
    }

    /** The float32 tensors of {@code tensors} (a checkpoint: parameters and optimizer moments) with the loss curve. */
    public static TrainingRecord of(Map<String, Tensor> tensors, double[] losses) {
        Map<String, float[]> floats = new LinkedHashMap<>();
        tensors.forEach((name, t) -> {
            if (t.dtype() == DType.F32) {
                floats.put(name, t.toFloatArray());
            }
        });
        return new TrainingRecord(floats, losses);
    }

    @Override
    public double[] losses() {
        return losses.clone();
    }
}
