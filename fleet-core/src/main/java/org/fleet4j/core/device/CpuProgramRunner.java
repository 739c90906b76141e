package org.fleet4j.core.device;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.Tensor;

/** The CPU's runner: the {@link Executor} itself, whose persistables live in the scope, so syncing does nothing. */
public final class CpuProgramRunner implements ProgramRunner {
    private final Executor executor;

    public CpuProgramRunner(Executor executor) {
        this.executor = executor;
    }

    /** The executor underneath, e.g. to attach a timeline to it. */
    public Executor executor() {
        return executor;
    }

    @Override
    public Device device() {
        return Devices.cpu();
    }

    @Override
    public Map<String, Tensor> run(Program program, Scope scope, Map<String, Tensor> feed, List<String> fetch) {
        return executor.run(program, scope, feed, fetch);
    }

    @Override
    public void run(Program program, Scope scope) {
        executor.run(program, scope);
    }

    @Override
    public void syncToScope(Scope scope) {
    }

    @Override
    public void scopeChanged() {
    }

    @Override
    public void close() {
        executor.clear();
        executor.close();
    }
}
