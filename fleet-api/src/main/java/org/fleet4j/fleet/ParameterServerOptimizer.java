package org.fleet4j.fleet;

import java.io.PrintStream;
import java.util.List;
import org.fleet4j.core.autodiff.Backward;
import org.fleet4j.core.autodiff.ParamGrad;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.optim.Optimizer;

/**
 * Training against parameter servers (strategy mode ps): {@code minimize} appends backward and the optimizer, then
 * the PS compile step rewrites the program into the worker's (pulls and pushes; the updates move to the servers); the
 * plan (which table and block lives on which server, and the transport) goes to the log.
 */
public final class ParameterServerOptimizer implements DistributedOptimizer {
    private final Optimizer inner;
    private final ParameterServerJob ps;
    private final boolean dryRun;
    private final PrintStream log;

    ParameterServerOptimizer(Optimizer inner, ParameterServerJob ps, boolean dryRun, PrintStream log) {
        if (inner == null) {
            throw new IllegalArgumentException("distributedOptimizer needs an optimizer, got null");
        }
        this.inner = inner;
        this.ps = ps;
        this.dryRun = dryRun;
        this.log = log;
    }

    @Override
    public Optimizer inner() {
        return inner;
    }

    @Override
    public List<ParamGrad> minimize(Var loss) {
        Program main = loss.block().program();
        if (main.startupProgram() == null) {
            throw new IrException("the program of loss '" + loss.name() + "' has no startup program; build it with"
                    + " Layers(main, startup) so the servers can initialise the parameters");
        }
        List<ParamGrad> grads = Backward.appendBackward(loss);
        inner.applyGradients(main, grads);
        log.print(ps.compile(main).describe() + ps.describeTransport());
        if (dryRun) {
            throw new DryRunFinished("fleet: dry run: the parameter-server plan is what trainers and servers would run;"
                    + " nothing ran");
        }
        return grads;
    }
}
