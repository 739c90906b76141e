package org.fleet4j.pserver.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.compile.SmallWideDeep;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.KeyHash;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.Mode;
import org.junit.jupiter.api.Test;

/** The worker's routing client over three in-process servers: where ids and blocks go, and a server that hangs. */
class PsWorkerTest {
    private static final int SERVERS = 3;
    private static final PsOptions OPTIONS = new PsOptions("127.0.0.1:0", Duration.ofMillis(300), null);

    private final PsPlan plan;
    private final List<TableShard> shards = new ArrayList<>();
    private final InProcessPsTransport transport;

    PsWorkerTest() {
        Program main = SmallWideDeep.build(100, 4, new SGD(1.0)).main();
        plan = PsCompiler.compile(main, new DistributedStrategy().mode(Mode.PS).aSync(false), SERVERS, 16);
        for (int i = 0; i < SERVERS; i++) {
            shards.add(plan.shard(i));
        }
        transport = new InProcessPsTransport(shards);
    }

    private List<PsConnection> connections() {
        List<PsConnection> c = new ArrayList<>();
        for (int i = 0; i < SERVERS; i++) {
            c.add(transport.connect("server-" + i, OPTIONS));
        }
        return c;
    }

    @Test
    void sparseIdsGoToTheServerTheirHashNamesAndRowsComeBackInOrder() {
        SparseTableConfig table = plan.sparseTables().get(1);
        int dim = table.dim();
        long[] ids = new long[64];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i * 7919L;
        }
        try (PsWorker worker = new PsWorker(plan, connections(), OPTIONS.deadline())) {
            Tensor grads = Tensor.zeros(DType.F32, ids.length, dim);
            for (int i = 0; i < ids.length; i++) {
                grads.setFloat((long) i * dim, i);
            }
            worker.pushSparse(table.name(), Tensor.ofLongs(ids, ids.length).segment(), ids.length, grads.segment());
            Tensor rows = Tensor.zeros(DType.F32, ids.length, dim);
            worker.pullSparse(table.name(), Tensor.ofLongs(ids, ids.length).segment(), ids.length, rows.segment());
            for (int i = 0; i < ids.length; i++) {
                assertEquals(table.initializer().value(ids[i], 0) - i, rows.getFloat((long) i * dim), 1e-6,
                        "row of id " + ids[i] + " after SGD at lr 1");
            }
        }
        long[] held = new long[SERVERS];
        for (int s = 0; s < SERVERS; s++) {
            held[s] = shards.get(s).sparseTable(table.name()).keys();
        }
        long[] expected = new long[SERVERS];
        for (long id : ids) {
            expected[KeyHash.serverOf(id, SERVERS)]++;
        }
        assertArrayEquals(expected, held, "each server holds exactly the ids that hash to it");
    }

    @Test
    void aDenseParameterIsAssembledFromItsBlocksOnEveryServer() {
        DenseTableConfig fc = plan.denseTables().getFirst();
        assertTrue(plan.denseBlocks().stream().filter(b -> b.param().equals(fc.name()))
                .map(b -> b.server()).distinct().count() > 1, "the test needs a parameter cut over servers");
        try (PsWorker worker = new PsWorker(plan, connections(), OPTIONS.deadline())) {
            Tensor grad = Tensor.zeros(DType.F32, fc.shape());
            grad.fill(1);
            worker.pushDense(fc.name(), grad.segment());
            Tensor value = Tensor.zeros(DType.F32, fc.shape());
            worker.pullDense(fc.name(), value.segment());
            for (long e = 0; e < fc.numel(); e++) {
                assertEquals(fc.initializer().value(0, e) - 1f, value.getFloat(e), 1e-6, "element " + e);
            }
        }
    }

    @Test
    void theLastServersCallRunsOnTheCallersThreadWhereItsConnectionBoundsItsCalls() {
        List<GatedConnection> gated = new ArrayList<>();
        connections().forEach(c -> gated.add(new GatedConnection(c, false)));
        String table = plan.sparseTables().getFirst().name();
        int dim = plan.sparseTables().getFirst().dim();
        long[] ids = new long[64];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i * 7919L;
        }
        Tensor rows = Tensor.zeros(DType.F32, ids.length, dim);
        try (PsWorker worker = new PsWorker(plan, List.copyOf(gated), OPTIONS.deadline())) {
            Runnable pull = () -> worker.pullSparse(table, Tensor.ofLongs(ids, ids.length).segment(), ids.length,
                    rows.segment());
            pull.run();
            for (GatedConnection g : gated) {
                assertTrue(g.sparsePullThreads.poll().isVirtual(), "no connection bounds its calls: all on virtual"
                        + " threads, each wait bounded here");
            }
            gated.forEach(g -> g.bounds = true);
            pull.run();
            for (int s = 0; s < SERVERS - 1; s++) {
                assertTrue(gated.get(s).sparsePullThreads.poll().isVirtual(), "server " + s + ": a virtual thread");
            }
            assertEquals(Thread.currentThread(), gated.get(SERVERS - 1).sparsePullThreads.poll(),
                    "the last server's call runs on the caller's thread");
            gated.get(SERVERS - 1).failure = new IllegalStateException("broken");
            PsException e = assertThrows(PsException.class, pull::run);
            assertEquals("pull_sparse of " + table + ": server 2 (server-2) failed: broken", e.getMessage());
        }
    }

    @Test
    void aServerThatDoesNotAnswerIsNamedWithinTheDeadline() {
        List<PsConnection> c = connections();
        c.set(2, transport.silent(2));
        try (PsWorker worker = new PsWorker(plan, c, OPTIONS.deadline())) {
            long[] ids = new long[64];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = i;
            }
            String table = plan.sparseTables().getFirst().name();
            Tensor rows = Tensor.zeros(DType.F32, ids.length, plan.sparseTables().getFirst().dim());
            PsException e = assertThrows(PsException.class, () -> worker.pullSparse(table,
                    Tensor.ofLongs(ids, ids.length).segment(), ids.length, rows.segment()));
            assertEquals("pull_sparse of " + table + ": server 2 (server-2) did not answer within 1300 ms",
                    e.getMessage());
        }
    }

    @Test
    void theWorkerProgramWithoutAParameterServerClientNamesTheOp() {
        try (Executor exe = new Executor()) {
            Scope scope = new Scope();
            exe.run(plan.workerStartup(), scope);
            RuntimeException e = assertThrows(RuntimeException.class, () -> exe.run(plan.workerMain(), scope));
            String messages = "";
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages += t.getMessage() + "\n";
            }
            assertTrue(messages.contains("op pull_dense (table fc_0.w_0) needs the job's parameter-server client, but the"
                    + " execution context has no PsCommunicator; run the worker program with the context of a worker"
                    + " (Fleet.initWorker)"), messages);
        }
    }

    @Test
    void aTableThePlanDoesNotHaveIsNamed() {
        try (PsWorker worker = new PsWorker(plan, connections(), OPTIONS.deadline())) {
            PsException e = assertThrows(PsException.class, () -> worker.pullSparse("nope",
                    Tensor.ofLongs(new long[]{1}, 1).segment(), 1, Tensor.zeros(DType.F32, 1, 4).segment()));
            assertTrue(e.getMessage().startsWith("no sparse table nope in the parameter-server plan; its sparse tables"
                    + " are [embedding_0.w_0, "), e.getMessage());
        }
    }
}
