package org.fleet4j.fleet;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The one-layer model of the parameter-server Fleet tests: loss = mean(x w + b) with x of width 2, so that with
 * x = [[1, 2], [3, 4]] each SGD step at lr 0.5 lowers the loss by 0.5 * (2^2 + 3^2 + 1) = 7.
 */
record PsTestNet(Program main, Program startup, Var x, Var loss) {
    /** What an SGD step at lr 0.5 takes off the loss. */
    static final float LOSS_DROP_PER_STEP = 0.5f * 14;

    static PsTestNet build() {
        Program main = new Program().setRandomSeed(3);
        Program startup = new Program().setRandomSeed(3);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 2);
        Var loss = nn.mean(nn.fc(x, 1, null));
        return new PsTestNet(main, startup, x, loss);
    }

    /** Runs the startup program, then three steps; the loss before the first update and after the second. */
    float[] firstAndThirdLoss(Fleet worker) {
        try (Executor exe = ExecutionSettings.executor(worker)) {
            Scope scope = new Scope();
            exe.run(startup, scope);
            Map<String, Tensor> feed = Map.of(x.name(), Tensor.of(new float[]{1, 2, 3, 4}, 2, 2));
            float first = exe.run(main, scope, feed, List.of(loss.name())).get(loss.name()).getFloat(0);
            exe.run(main, scope, feed, List.of());
            float third = exe.run(main, scope, feed, List.of(loss.name())).get(loss.name()).getFloat(0);
            return new float[]{first, third};
        }
    }
}
