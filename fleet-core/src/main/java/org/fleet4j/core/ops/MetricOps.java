package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** accuracy: the fraction of rows whose highest score is at the label. */
@AutoService(OpLibrary.class)
public final class MetricOps implements OpLibrary {
    public static final String ACCURACY = "accuracy";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(ACCURACY)
                .in("Out", "Label").out("Accuracy").optionalOut("Correct", "Total")
                .shape(ctx -> {
                    ctx.requireRank("Out", 2);
                    ctx.requireInteger("Label");
                    ctx.set("Accuracy", DType.F32);
                    ctx.set("Correct", DType.I64);
                    ctx.set("Total", DType.I64);
                })
                .kernel(op -> a -> {
                    Tensor scores = a.in("Out");
                    Tensor label = a.in("Label");
                    long rows = scores.dim(0);
                    long c = scores.dim(1);
                    if (label.numel() != rows) {
                        throw new IllegalArgumentException("accuracy: Label has " + label.numel() + " entries for "
                                + rows + " rows");
                    }
                    long correct = 0;
                    for (long r = 0; r < rows; r++) {
                        long best = 0;
                        float bestV = scores.getFloat(r * c);
                        for (long j = 1; j < c; j++) {
                            float v = scores.getFloat(r * c + j);
                            if (v > bestV) {
                                bestV = v;
                                best = j;
                            }
                        }
                        if (best == label.getLong(r)) {
                            correct++;
                        }
                    }
                    a.out("Accuracy", DType.F32).setFloat(0, rows == 0 ? 0f : (float) correct / rows);
                    if (a.hasOut("Correct")) {
                        a.out("Correct", DType.I64).setLong(0, correct);
                    }
                    if (a.hasOut("Total")) {
                        a.out("Total", DType.I64).setLong(0, rows);
                    }
                })
                .build());
        return specs;
    }
}
