package org.fleet4j.core.device;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.Tensor;

/**
 * Runs programs on one device with the {@code Executor}'s contract: persistable vars come from and go to a
 * {@link Scope}, feeds are host tensors, fetches come back as host tensors (copies, safe to keep). A device other than
 * the CPU keeps persistables in its own memory between runs, so the scope's tensors are only current after
 * {@link #syncToScope}; after changing the scope's values by hand (loading a checkpoint), call {@link #scopeChanged}.
 */
public interface ProgramRunner extends AutoCloseable {
    Device device();

    /** Runs one step of {@code program}; the result holds each fetched var by name. */
    Map<String, Tensor> run(Program program, Scope scope, Map<String, Tensor> feed, List<String> fetch);

    /** Runs a program with no feed and no fetch (a startup program). */
    default void run(Program program, Scope scope) {
        run(program, scope, Map.of(), List.of());
    }

    /** Writes the device's current values of every persistable it holds into {@code scope}. */
    void syncToScope(Scope scope);

    /** Forgets the device's copies of persistables, so the next run reads them from the scope again. */
    void scopeChanged();

    /** Releases the runner's device memory; the device itself stays open. */
    @Override
    void close();
}
