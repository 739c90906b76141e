package org.fleet4j.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.pserver.worker.PsWorker;
import org.fleet4j.pserver.worker.SparseIds;

/**
 * One {@code ps_perf} worker's steps: batches of Zipf(1.1) ids over [0, ids), drawn from the worker's own seed and
 * deduplicated before any timing (so a step times the parameter servers, not the drawing), the rows they pull into and
 * the gradients they push, and the dense tensors. Unfused, a step pulls a batch's rows, pushes its gradients, then
 * pulls and pushes every dense tensor, one call per tensor and server; fused ({@code tensor_fuse} or a star protocol),
 * it makes one {@link PsWorker#pullFused} of the rows and every dense tensor and one {@link PsWorker#pushFused}, one
 * message per server each. The bytes the connections put on the wire are read around each part.
 */
final class PsPerfWorkload {
    /** Called after each step with the totals so far. */
    interface Progress {
        void step(int done, Totals sofar);
    }

    private final String table;
    private final int dim;
    private final List<Tensor> batchIds = new ArrayList<>();
    private final Tensor rows;
    private final Tensor grads;
    private final List<String> denseNames = new ArrayList<>();
    private final List<Tensor> denseValues = new ArrayList<>();
    private final List<Tensor> denseGrads = new ArrayList<>();
    private final List<PsCommunicator.Dense> fusedValues = new ArrayList<>();
    private final List<PsCommunicator.Dense> fusedGrads = new ArrayList<>();
    private final long denseBytes;
    private final boolean fused;
    private final int denseBlocks;
    private final int servers;
    private int next;

    PsPerfWorkload(PsPlan plan, int batch, int batches, long ids, long seed, int worker, boolean fused) {
        this.fused = fused;
        this.denseBlocks = plan.denseBlocks().size();
        this.servers = plan.servers();
        this.table = plan.sparseTables().getFirst().name();
        this.dim = plan.sparseTables().getFirst().dim();
        SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + worker);
        int most = 0;
        if (batch > 0) {
            ZipfLaw zipf = new ZipfLaw(Math.toIntExact(ids), PsPerf.ZIPF_EXPONENT);
            Tensor drawn = Tensor.zeros(DType.I64, batch);
            for (int b = 0; b < batches; b++) {
                for (int i = 0; i < batch; i++) {
                    drawn.setLong(i, zipf.draw(rnd));
                }
                Tensor unique = SparseIds.of(drawn, -1).unique();
                batchIds.add(unique);
                most = Math.max(most, Math.toIntExact(unique.numel()));
            }
        }
        rows = Tensor.zeros(DType.F32, Math.max(1, most), dim);
        grads = random(rnd, (long) Math.max(1, most) * dim);
        long bytes = 0;
        for (DenseTableConfig d : plan.denseTables()) {
            denseNames.add(d.name());
            denseValues.add(Tensor.zeros(DType.F32, d.numel()));
            denseGrads.add(random(rnd, d.numel()));
            bytes += d.numel() * Float.BYTES;
            fusedValues.add(new PsCommunicator.Dense(d.name(), denseValues.getLast().segment()));
            fusedGrads.add(new PsCommunicator.Dense(d.name(), denseGrads.getLast().segment()));
        }
        denseBytes = bytes;
    }

    /** Small gradients, so the rows stay near their start however long the run. */
    private static Tensor random(SplittableRandom rnd, long floats) {
        Tensor t = Tensor.zeros(DType.F32, floats);
        for (long i = 0; i < floats; i++) {
            t.setFloat(i, (float) (rnd.nextDouble() - 0.5) * 1e-3f);
        }
        return t;
    }

    double meanUnique() {
        return batchIds.stream().mapToLong(Tensor::numel).average().orElse(0);
    }

    /** Bytes of one pass over the dense tensors (each is pulled and pushed once a step). */
    long denseBytes() {
        return denseBytes;
    }

    boolean fused() {
        return fused;
    }

    /**
     * Data-plane calls (messages) one worker makes per step, from the plan: fused, one pull and one push per server;
     * unfused, a pull and a push per server for the sparse table (a batch of thousands of ids reaches every server)
     * and per dense block.
     */
    int callsPerStep() {
        if (fused) {
            return 2 * servers;
        }
        return 2 * ((batchIds.isEmpty() ? 0 : servers) + denseBlocks);
    }

    /** Runs {@code steps} steps through {@code client}; {@code connections} are its connections, for their byte counts. */
    Totals run(PsWorker client, List<PsConnection> connections, int steps, Progress progress) {
        Totals t = new Totals(steps);
        long start = System.nanoTime();
        for (int s = 0; s < steps; s++) {
            long t0 = System.nanoTime();
            if (fused) {
                fusedStep(client, connections, t);
            } else {
                step(client, connections, t);
            }
            long now = System.nanoTime();
            t.stepNanos[s] = now - t0;
            t.nanos = now - start;
            if (progress != null) {
                progress.step(s + 1, t);
            }
        }
        t.wireCounted = connections.stream().allMatch(c -> c.wireBytes() >= 0);
        return t;
    }

    /** One call per tensor (and server): the rows, their gradients, then each dense tensor's pull and push. */
    private void step(PsWorker client, List<PsConnection> connections, Totals t) {
        long w0 = wire(connections);
        if (!batchIds.isEmpty()) {
            Tensor ids = batchIds.get(next);
            next = (next + 1) % batchIds.size();
            int n = Math.toIntExact(ids.numel());
            client.pullSparse(table, ids.segment(), n, rows.segment());
            long w1 = wire(connections);
            client.pushSparse(table, ids.segment(), n, grads.segment());
            long w2 = wire(connections);
            t.keys += n;
            long rowsBytes = (long) n * (Long.BYTES + (long) dim * Float.BYTES);
            t.payloadBytes += 2 * rowsBytes;
            t.pullPayload += rowsBytes;
            t.pullWire += w1 - w0;
            t.pushWire += w2 - w1;
            w0 = w2;
        }
        for (int k = 0; k < denseNames.size(); k++) {
            client.pullDense(denseNames.get(k), denseValues.get(k).segment());
            client.pushDense(denseNames.get(k), denseGrads.get(k).segment());
        }
        t.denseWire += wire(connections) - w0;
        t.payloadBytes += 2 * denseBytes;
    }

    /**
     * One fused pull of the rows and every dense tensor, then one fused push of their gradients: a pull's wire bytes
     * and payload here include the dense tensors.
     */
    private void fusedStep(PsWorker client, List<PsConnection> connections, Totals t) {
        List<PsCommunicator.Sparse> pull = List.of();
        List<PsCommunicator.Sparse> push = List.of();
        long rowsBytes = 0;
        if (!batchIds.isEmpty()) {
            Tensor ids = batchIds.get(next);
            next = (next + 1) % batchIds.size();
            int n = Math.toIntExact(ids.numel());
            pull = List.of(new PsCommunicator.Sparse(table, ids.segment(), n, rows.segment()));
            push = List.of(new PsCommunicator.Sparse(table, ids.segment(), n, grads.segment()));
            t.keys += n;
            rowsBytes = (long) n * (Long.BYTES + (long) dim * Float.BYTES);
        }
        long w0 = wire(connections);
        client.pullFused(fusedValues, pull);
        long w1 = wire(connections);
        client.pushFused(fusedGrads, push);
        long w2 = wire(connections);
        t.payloadBytes += 2 * (rowsBytes + denseBytes);
        t.pullPayload += rowsBytes + denseBytes;
        t.pullWire += w1 - w0;
        t.pushWire += w2 - w1;
    }

    /** Bytes on the wire of all connections so far (meaningless, and not reported, where a transport counts none). */
    private static long wire(List<PsConnection> connections) {
        long sum = 0;
        for (PsConnection c : connections) {
            sum += c.wireBytes();
        }
        return sum;
    }

    /** What a run of steps did and took. */
    static final class Totals {
        private final long[] stepNanos;
        private long keys;
        private long payloadBytes;
        private long pullPayload;
        private long pullWire;
        private long pushWire;
        private long denseWire;
        private long nanos;
        private boolean wireCounted;

        Totals(int steps) {
            stepNanos = new long[steps];
        }

        long keys() {
            return keys;
        }

        long payloadBytes() {
            return payloadBytes;
        }

        long pullPayload() {
            return pullPayload;
        }

        long pullWire() {
            return pullWire;
        }

        long pushWire() {
            return pushWire;
        }

        long denseWire() {
            return denseWire;
        }

        long nanos() {
            return nanos;
        }

        boolean wireCounted() {
            return wireCounted;
        }

        /** The {@code q} quantile of the step times in ms (nearest rank). */
        double percentileMs(double q) {
            long[] sorted = stepNanos.clone();
            Arrays.sort(sorted);
            int at = Math.min(sorted.length - 1, Math.max(0, (int) Math.ceil(q * sorted.length) - 1));
            return sorted.length == 0 ? 0 : sorted[at] / 1e6;
        }
    }
}
