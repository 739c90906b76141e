package org.fleet4j.launch;

import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The launcher's command line, with Paddle's option names (nulls are options left out). */
@Command(name = "fleetrun",
        customSynopsis = "bin/fleetrun [OPTIONS] PROGRAM [PROGRAM ARGS...]",
        description = {
            "Starts one JVM per rank of a Fleet4J job on this node with the rank's role in its environment",
            "(FLEET_RANK, FLEET_WORLD_SIZE, FLEET_MASTER, ..., and Paddle's PADDLE_*), logs each rank to LOG_DIR/workerlog.N,",
            "echoes rank 0, and stops the whole job when any rank fails.",
            "PROGRAM is a built-in name, a main class, or a jar with a Main-Class; the words after it go to the program untouched.",
            ""},
        usageHelpWidth = 120,
        sortOptions = false)
final class LaunchOptions {
    enum OutputFormat { TABLE, JSON }

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Option(names = "--nproc_per_node", paramLabel = "N",
            description = "Ranks (JVMs) on this node. Default 1, or one per GPU in --devices.")
    Integer nprocPerNode;

    @Option(names = {"--devices", "--gpus"}, paramLabel = "DEVICES",
            description = "cpu (default), gpu (every visible GPU), or GPU ids like 0,1: one rank per id, FLEET_DEVICE_ID set per rank.")
    String devices;

    @Option(names = "--ips", split = ",", paramLabel = "HOST", description = "Every node's host, comma separated, node 0 first.")
    List<String> ips;

    @Option(names = "--master", paramLabel = "HOST:PORT",
            description = "Rendezvous store (hosted by rank 0). Default: first of --ips at --start_port, or a free local port.")
    String master;

    @Option(names = "--nnodes", paramLabel = "N", description = "Number of nodes. Default: the number of --ips, else 1.")
    Integer nnodes;

    @Option(names = "--rank", paramLabel = "NODE_RANK", description = "This node's rank. Default: found by matching this machine in --ips.")
    Integer nodeRank;

    @Option(names = "--log_dir", paramLabel = "DIR", defaultValue = "log", description = "Where workerlog.N and endpoints.log go. Default: ${DEFAULT-VALUE}.")
    String logDir;

    @Option(names = "--start_port", paramLabel = "PORT",
            description = "Rank endpoints are host:(PORT + local rank). Default 6170 with several nodes, else free ports.")
    Integer startPort;

    @Option(names = "--strategy", paramLabel = "FILE", description = "DistributedStrategy file (YAML, JSON or prototxt), passed as FLEET_STRATEGY.")
    String strategy;

    @Option(names = "--dry_run", description = "Print the effective strategy for this world and exit; starts nothing.")
    boolean dryRun;

    @Option(names = "--format", paramLabel = "table|json", defaultValue = "table", description = "Output of --dry_run. Default: ${DEFAULT-VALUE}.")
    OutputFormat format;

    @Option(names = "--job_id", paramLabel = "ID", defaultValue = "default", description = "Job name, passed as FLEET_JOB_ID. Default: ${DEFAULT-VALUE}.")
    String jobId;

    @Option(names = "--job_token_file", paramLabel = "FILE",
            description = "Secret shared by the job's ranks (mode 0600). Needed with several nodes, unless FLEET_JOB_TOKEN is set;"
                    + " on one node fleetrun makes a fresh one.")
    String jobTokenFile;

    @Option(names = "--log_level", paramLabel = "info|debug|warn", defaultValue = "info",
            description = "Launcher verbosity, passed as FLEET_LOG_LEVEL; debug also shows stack traces. Default: ${DEFAULT-VALUE}.")
    LogLevel logLevel;

    @Option(names = "--jvm_args", paramLabel = "\"ARGS\"", description = "Extra arguments for every rank's JVM, e.g. \"-Xmx8g -XX:+UseZGC\".")
    String jvmArgs;

    @Option(names = "--cpu_bind", paramLabel = "auto|none|cores", defaultValue = "auto",
            description = "Bind each rank to its own slice of this node's CPUs (taskset): auto binds CPU jobs of 2 or more ranks"
                    + " that fit one rank per CPU, cores always binds (or fails), none never. Default: ${DEFAULT-VALUE}.")
    CpuBinding.Mode cpuBind;

    @Option(names = "--skip_memory_check",
            description = "Start a CPU job even when its ranks (heap + off-heap + JVM, from --jvm_args) exceed the memory available.")
    boolean skipMemoryCheck;

    @Option(names = "--metrics_port", paramLabel = "PORT",
            description = "Serve this node's ranks' figures (step time, samples/s, allreduce and parameter-server times,"
                    + " exits) in Prometheus's text format at http://HOST:PORT/metrics while the job runs. Default: off.")
    Integer metricsPort;

    @Option(names = "--metrics_host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "The address --metrics_port listens on, e.g. 0.0.0.0 for every interface. Default: ${DEFAULT-VALUE}.")
    String metricsHost;

    @Option(names = "--server_num", paramLabel = "N",
            description = "Parameter-server mode on this host: start N parameter servers (on free ports) beside the trainers;"
                    + " the program's strategy must have mode ps. They are stopped when every trainer has finished.")
    Integer serverNum;

    @Option(names = "--worker_num", paramLabel = "N",
            description = "Parameter-server mode: the number of trainers (workers) on this host. Default: --nproc_per_node, else 1.")
    Integer workerNum;

    @Option(names = "--servers", paramLabel = "ENDPOINTS", description = "Parameter servers on several hosts, as Paddle's launch_ps: every server's ip:port, in server order;"
                    + " give the same --servers and --workers to fleetrun on each host, which starts the processes whose ip is its own.")
    String servers;

    @Option(names = "--workers", paramLabel = "ENDPOINTS", description = "Trainers on several hosts (with --servers): every trainer's ip:port, in trainer-id order, host by host,"
                    + " the same number on each host on consecutive ports from the same first port.")
    String workers;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PROGRAM", description = "Built-in name, main class, or jar.")
    String program;

}
