package org.fleet4j.launch;

import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.fleet.Fleet;

/** A training program for {@code fleetrun --dry_run PROGRAM}: it must stop inside minimize, so it exits 3 after it. */
public final class DryRunProbe {
    private DryRunProbe() {
    }

    public static void main(String[] args) {
        try (Fleet fleet = Fleet.init()) {
            Program main = new Program();
            Program startup = new Program();
            Layers nn = new Layers(main, startup);
            Var x = nn.data("x", DType.F32, -1, 4);
            Var y = nn.data("label", DType.I64, -1, 1);
            Var loss = nn.mean(nn.softmaxWithCrossEntropy(nn.fc(nn.fc(x, 6, "relu"), 3, null), y));
            fleet.distributedOptimizer(new SGD(0.5)).minimize(loss);
            System.out.println("probe: past minimize");
        }
        System.exit(3);
    }
}
