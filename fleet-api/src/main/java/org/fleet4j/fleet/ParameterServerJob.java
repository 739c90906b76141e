package org.fleet4j.fleet;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.fleet4j.core.ir.Program;
import org.fleet4j.pserver.compile.PsCompiler;
import org.fleet4j.pserver.compile.PsInference;
import org.fleet4j.pserver.compile.PsMode;
import org.fleet4j.pserver.compile.PsOpTypes;
import org.fleet4j.pserver.compile.PsPlan;
import org.fleet4j.pserver.table.SaveIdentity;
import org.fleet4j.pserver.table.SavedValues;
import org.fleet4j.pserver.table.TableShard;
import org.fleet4j.pserver.table.TableStats;
import org.fleet4j.pserver.transport.ConnectOnFirstCall;
import org.fleet4j.pserver.transport.PsConnection;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.pserver.transport.PsOptions;
import org.fleet4j.pserver.transport.PsServer;
import org.fleet4j.pserver.transport.PsTransport;
import org.fleet4j.pserver.worker.AsyncCommunicator;
import org.fleet4j.pserver.worker.GeoCommunicator;
import org.fleet4j.pserver.worker.PsCommunicator;
import org.fleet4j.pserver.worker.PsWorker;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.rules.EffectiveStrategy;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * A process's part in a parameter-server job (strategy mode ps): the plan that {@code minimize} compiled, and then
 * either the server's shard of the tables, served over the strategy's protocol until the workers stop it, or the
 * worker's client of every server. Every call to another process waits at most the job's timeout.
 */
final class ParameterServerJob {
    /** How often a serving server looks up from its wait, so that a stuck stop cannot hold it forever unnoticed. */
    private static final Duration SERVE_POLL = Duration.ofSeconds(30);

    private final Role role;
    private final DistributedStrategy strategy;
    private final EffectiveStrategy effective;
    private final PsOptions options;
    private final PrintStream log;
    private PsPlan plan;
    private TableShard shard;
    private PsWorker worker;
    /** The mode's communicator over {@link #worker} (the worker itself in sync mode). */
    private PsCommunicator communicator;

    /** {@code strategy} is what the PS compile step reads; {@code effective} the same resolved for this world. */
    ParameterServerJob(Role role, DistributedStrategy strategy, EffectiveStrategy effective, JobToken token,
                       Duration timeout, PrintStream log) {
        this.role = role;
        this.strategy = strategy;
        this.effective = effective;
        this.options = new PsOptions(null, timeout, token);
        this.log = log;
    }

    String protocol() {
        return effective.get(StrategySchema.PROTOCOL);
    }

    /** The transport and its settings in this process's environment (threads, polling, pinning for grpc++). */
    String describeTransport() {
        return PsTransport.forProtocol(protocol()).describe(System.getenv(), role.workerNum());
    }

    PsMode mode() {
        return PsMode.of(strategy);
    }

    /** Servers of the job: those listed in PADDLE_PSERVERS_IP_PORT_LIST (one for a dry run without servers). */
    int servers() {
        return Math.max(1, role.serverNum());
    }

    /** Rewrites {@code main} and its startup program into the worker's programs; the plan is kept for the rest. */
    PsPlan compile(Program main) {
        plan = PsCompiler.compileInPlace(main, strategy, servers());
        return plan;
    }

    Program forward(Program test) {
        return PsCompiler.forward(test, plan("testProgram"));
    }

    private PsPlan plan(String what) {
        if (plan == null) {
            throw new IllegalStateException("Fleet." + what + ": no parameter-server plan yet; call"
                    + " fleet.distributedOptimizer(optimizer).minimize(loss) first, on servers and workers alike");
        }
        return plan;
    }

    /** The server's shard of every table, from {@code checkpointDir} when it is not null. */
    void initServer(Path checkpointDir) {
        TableShard tables = plan("initServer").shard(role.serverIndex());
        if (plan.mode() == PsMode.SYNC) {
            tables.aggregateSteps(role.workerNum());
        } else {
            tables.countStepsOver(role.workerNum());
        }
        if (checkpointDir != null) {
            tables.load(checkpointDir);
            log.println("fleet: server " + role.serverIndex() + " loaded its tables from " + checkpointDir);
        }
        shard = tables;
    }

    /** Serves the shard until a worker's stop (or the end of the process). */
    void runServer() {
        if (shard == null) {
            throw new IllegalStateException("Fleet.runServer: call fleet.initServer(checkpointDirOrNull) first");
        }
        String endpoint = role.serverEndpoint();
        try (PsServer server = PsTransport.forProtocol(protocol()).serve(shard, options.withEndpoint(endpoint))) {
            log.println("fleet: server " + role.serverIndex() + " serves " + plan.denseTables().size() + " dense and "
                    + plan.sparseTables().size() + " sparse table(s) on " + server.endpoint() + " over " + protocol()
                    + " (" + plan.mode().spelling() + " mode, " + role.workerNum() + " worker(s))");
            while (!server.awaitStop(SERVE_POLL)) {
                // serving: the workers' stop ends the wait
            }
            log.println("fleet: server " + role.serverIndex() + " stopped by the workers");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PsException("server " + role.serverIndex() + " (" + endpoint + ") was interrupted while serving", e);
        }
    }

    /**
     * Connects to every server (each connect waits up to the job's timeout for its server: the launch barrier), or,
     * with {@code launch_barrier: false}, waits for none and connects to each server at the first call to it; the
     * returned communicator, the mode's, is what the worker program's kernels call.
     */
    PsCommunicator initWorker() {
        PsPlan p = plan("initWorker");
        if (role.serverNum() == 0) {
            throw new IllegalStateException("Fleet.initWorker: " + role.describe() + " has no parameter servers;"
                    + " start the job with bin/fleetrun --server_num S --worker_num W, or set"
                    + " PADDLE_PSERVERS_IP_PORT_LIST");
        }
        PsTransport transport = PsTransport.forProtocol(protocol());
        List<PsConnection> connections = p.communicator().launchBarrier()
                ? transport.connectAll(role.serverEndpoints(), options)
                : ConnectOnFirstCall.all(transport, role.serverEndpoints(), options);
        worker = new PsWorker(p, connections, options.deadline(), role.workerIndex(), role.workerNum());
        communicator = switch (p.mode()) {
            case SYNC -> worker;
            case ASYNC, HALF_ASYNC -> new AsyncCommunicator(p, worker, options.deadline());
            case GEO -> new GeoCommunicator(p, worker, options.deadline(), role.workerNum());
        };
        return communicator;
    }

    /** Sends what the communicator still holds (async queues, geo's local progress) and waits for the servers. */
    void flush() {
        worker("flush");
        communicator.flush();
    }

    /** Whether {@link #initWorker} connected this trainer (ps_perf, for one, talks to the servers on its own). */
    boolean workerStarted() {
        return communicator != null;
    }

    /** After a barrier of flushed workers: the next pulls read the servers ({@link PsCommunicator#catchUp}). */
    void catchUp() {
        worker("catchUp");
        communicator.catchUp();
    }

    private PsWorker worker(String what) {
        if (worker == null) {
            throw new IllegalStateException("Fleet." + what + ": call fleet.initWorker() first");
        }
        return worker;
    }

    /** Every server writes its shard of every table to {@code dir} (on the servers' file system), as one save. */
    void save(Path dir, long epoch, long step, boolean incremental) {
        flush();
        SaveIdentity fresh = SaveIdentity.fresh(role.jobId(), epoch, step);
        SaveIdentity save = incremental ? fresh.asIncremental() : fresh;
        worker("savePersistables").eachServer("save to " + dir, c -> c.save(dir, save));
    }

    /** Every server's table figures, one list per server in server order. */
    List<List<TableStats>> tableStats() {
        return worker("serverTableStats").stats();
    }

    /**
     * {@code test} (a forward program, with or without its pulls) as a model that runs without servers: every server
     * saves its tables to {@code staging}, whose values ({@link SavedValues}) the model takes (see {@link PsInference}).
     */
    PsInference inference(Program test, Path staging) {
        boolean pulls = test.globalBlock().ops().stream().anyMatch(op -> op.type().equals(PsOpTypes.PULL_DENSE)
                || op.type().equals(PsOpTypes.PULL_SPARSE));
        Program forward = pulls ? test : forward(test);
        save(staging, SaveIdentity.UNKNOWN, SaveIdentity.UNKNOWN, false);
        return PsInference.of(forward, plan("saveInferenceModel"), SavedValues.read(staging));
    }

    /** Asks every server to stop serving, then closes the connections. */
    void stopServers() {
        worker("stopWorker").eachServer("stop", PsConnection::stop);
    }

    void closeWorker() {
        if (communicator instanceof AsyncCommunicator async) {
            log.println("fleet: " + plan.mode().spelling() + " communicator sent " + async.traffic());
        }
        if (communicator instanceof AutoCloseable && communicator != worker) {
            try {
                ((AutoCloseable) communicator).close();
            } catch (Exception e) {
                throw new PsException("closing the " + plan.mode().spelling() + " communicator failed: " + e.getMessage(), e);
            }
        }
        communicator = null;
        if (worker != null) {
            worker.close();
            worker = null;
        }
    }
}
