package org.fleet4j.fleet.role;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.Role;
import org.junit.jupiter.api.Test;

/** Each scheduler's variables, exactly as its operator or launcher sets them, and what they place. */
class ClusterEnvironmentsTest {
    private static Placement place(Map<String, String> env) {
        return ClusterDetector.all().detect(env).orElseThrow(() -> new AssertionError("no environment found in " + env));
    }

    private static Placement.Nodes nodes(Map<String, String> env) {
        return assertInstanceOf(Placement.Nodes.class, place(env));
    }

    private static String error(Map<String, String> env) {
        return assertThrows(IllegalArgumentException.class, () -> place(env)).getMessage();
    }

    @Test
    void everyEnvironmentIsRegisteredOnceWithItsOwnOrder() {
        List<String> names = ClusterDetector.all().environments().stream().map(ClusterEnvironment::name).toList();
        assertEquals(List.of("fleetrun", "Paddle launcher", "torchrun", "Volcano", "PyTorchJob (Kubeflow training-operator)",
                "PaddleJob (Kubeflow training-operator)", "JobSet", "Open MPI", "MPICH/Intel MPI (PMI)", "Slurm"), names);
        assertEquals(names.size(), ClusterDetector.all().environments().stream().mapToInt(ClusterEnvironment::order)
                .distinct().count());
    }

    /** What training-operator v1 gives the Worker 0 pod of a PyTorchJob with one Master and one Worker. */
    private static Map<String, String> pytorchJobWorker0() {
        return new HashMap<>(Map.of("MASTER_ADDR", "mnist-master-0", "MASTER_PORT", "23456", "WORLD_SIZE", "2", "RANK", "1",
                "PET_NPROC_PER_NODE", "1", "PET_NODE_RANK", "1", "PET_NNODES", "2", "PYTHONUNBUFFERED", "0"));
    }

    @Test
    void aPyTorchJobPodIsOneNodeOfTheJob() {
        Placement.Nodes p = nodes(pytorchJobWorker0());
        assertEquals("PyTorchJob (Kubeflow training-operator)", p.scheduler());
        assertEquals(2, p.nnodes());
        assertEquals(1, p.nodeRank());
        assertEquals(1, p.nprocPerNode());
        assertEquals("mnist-master-0:23456", p.master());
        assertTrue(p.variables().contains("PET_NODE_RANK=1"), p.variables().toString());

        Map<String, String> four = pytorchJobWorker0();
        four.putAll(Map.of("PET_NPROC_PER_NODE", "4", "WORLD_SIZE", "8"));
        assertEquals(4, nodes(four).nprocPerNode());
        // nprocPerNode auto: the operator counts it as one rank per pod in WORLD_SIZE, and fleetrun picks its default
        Map<String, String> auto = pytorchJobWorker0();
        auto.put("PET_NPROC_PER_NODE", "auto");
        assertEquals(null, nodes(auto).nprocPerNode());
        // without PET_* (an older operator, or Volcano's pytorch plugin) each pod is one rank
        Map<String, String> plain = Map.of("MASTER_ADDR", "m", "MASTER_PORT", "1234", "WORLD_SIZE", "3", "RANK", "2");
        assertEquals(List.of(3, 2), List.of(nodes(plain).nnodes(), nodes(plain).nodeRank()));
        assertEquals(Role.trainer(2, 3, 0, 1, 2, 3, "m:1234", "10.0.0.9", "fleet4j", "PyTorchJob (Kubeflow training-operator)"),
                place(withHost(plain)).role());
    }

    private static Map<String, String> withHost(Map<String, String> env) {
        Map<String, String> m = new HashMap<>(env);
        m.put("FLEET_HOST", "10.0.0.9");
        return m;
    }

    @Test
    void anIncompletePyTorchJobIsAnErrorNamingTheVariable() {
        Map<String, String> noMaster = Map.of("WORLD_SIZE", "2", "RANK", "1");
        assertTrue(error(noMaster).startsWith("PyTorchJob (Kubeflow training-operator): environment variable MASTER_ADDR is"
                + " not set: WORLD_SIZE=2 ranks on 2 pods need the master's address"), error(noMaster));
        assertTrue(error(Map.of("WORLD_SIZE", "2", "MASTER_ADDR", "m", "MASTER_PORT", "1")).contains("RANK is not set"));
        Map<String, String> elastic = pytorchJobWorker0();
        elastic.put("PET_NNODES", "1:3");
        assertTrue(error(elastic).contains("PET_NNODES=1:3 is an elastic range"), error(elastic));
        Map<String, String> wrongWorld = pytorchJobWorker0();
        wrongWorld.put("WORLD_SIZE", "3");
        assertTrue(error(wrongWorld).contains("WORLD_SIZE=3 is not PET_NNODES=2 x 1 rank(s) per node"), error(wrongWorld));
        Map<String, String> fourPerPod = pytorchJobWorker0();
        fourPerPod.putAll(Map.of("PET_NPROC_PER_NODE", "4", "WORLD_SIZE", "8"));
        // the program started in the pod directly is one process, not the four the job asks for
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EnvironmentRoleMaker(fourPerPod).role()).getMessage()
                .contains("start the program with bin/fleetrun in each node"));
    }

    @Test
    void anElasticPyTorchJobWithoutAMasterTakesTheIndexFromTheHostName() {
        Map<String, String> env = Map.of("PET_NNODES", "3:3", "PET_NPROC_PER_NODE", "1", "WORLD_SIZE", "3",
                "PET_RDZV_ENDPOINT", "train-worker-0:23456", "PET_RDZV_BACKEND", "c10d", "HOSTNAME", "train-worker-2");
        Placement.Nodes p = nodes(env);
        assertEquals(List.of(3, 2), List.of(p.nnodes(), p.nodeRank()));
        assertEquals("train-worker-0:23456", p.master());
    }

    @Test
    void torchrunInsideAPyTorchJobPodIsTorchrun() {
        Map<String, String> env = pytorchJobWorker0();
        env.putAll(Map.of("LOCAL_RANK", "0", "LOCAL_WORLD_SIZE", "1", "GROUP_RANK", "1", "TORCHELASTIC_RUN_ID", "r"));
        assertEquals("torchrun", place(env).scheduler());
    }

    @Test
    void aPaddleJobPodTakesItsRankFromPaddleRankOrItsHostName() {
        Map<String, String> env = new HashMap<>(Map.of("PADDLE_MASTER", "ctr-worker-0:36543", "PADDLE_NNODES", "3",
                "PADDLE_JOB_ID", "ctr", "HOSTNAME", "ctr-worker-2"));
        Placement.Nodes p = nodes(env);
        assertEquals(List.of(3, 2), List.of(p.nnodes(), p.nodeRank()));
        assertEquals("ctr-worker-0:36543", p.master());
        assertEquals("ctr", p.jobId());
        env.put("PADDLE_RANK", "1");
        assertEquals(1, nodes(env).nodeRank());
        env.remove("PADDLE_RANK");
        env.put("HOSTNAME", "laptop");
        assertTrue(error(env).contains("PADDLE_RANK is not set, and the pod's host name HOSTNAME=laptop is not"
                + " ctr-worker-<i> with i < PADDLE_NNODES=3"), error(env));
        env.put("PADDLE_TRAINER_NUM", "1");
        assertTrue(error(env).contains("Paddle's parameter-server mode"), error(env));
    }

    /** What Volcano's env and svc plugins give pod 1 of a job "mnist" with one task "worker" of 2 pods. */
    private static Map<String, String> volcanoWorker1() {
        return new HashMap<>(Map.of("VC_TASK_INDEX", "1", "VK_TASK_INDEX", "1", "VC_WORKER_HOSTS",
                "mnist-worker-0.mnist,mnist-worker-1.mnist", "VC_WORKER_NUM", "2", "HOSTNAME", "mnist-worker-1"));
    }

    @Test
    void aVolcanoPodIsANodeOfItsTask() {
        Placement.Nodes p = nodes(volcanoWorker1());
        assertEquals(List.of(2, 1), List.of(p.nnodes(), p.nodeRank()));
        assertEquals("mnist-worker-0.mnist:6170", p.master());
        assertEquals(List.of("mnist-worker-0.mnist", "mnist-worker-1.mnist"), p.hosts());
        assertEquals("mnist-worker-1.mnist", p.host());
        assertEquals("mnist", p.jobId());
        Map<String, String> noSvc = Map.of("VC_TASK_INDEX", "0");
        assertTrue(error(noSvc).contains("no VC_<TASK>_HOSTS: enable the job's svc plugin"), error(noSvc));
        Map<String, String> miscounted = volcanoWorker1();
        miscounted.put("VC_WORKER_NUM", "3");
        assertTrue(error(miscounted).contains("VC_WORKER_NUM=3 but VC_WORKER_HOSTS lists 2 host(s)"), error(miscounted));
    }

    @Test
    void aVolcanoParameterServerJobGivesServersAndTrainers() {
        Map<String, String> server = new HashMap<>(Map.of("VC_TASK_INDEX", "1", "VC_PS_HOSTS", "ctr-ps-0.ctr,ctr-ps-1.ctr",
                "VC_PS_NUM", "2", "VC_WORKER_HOSTS", "ctr-worker-0.ctr,ctr-worker-1.ctr,ctr-worker-2.ctr", "VC_WORKER_NUM", "3",
                "HOSTNAME", "ctr-ps-1"));
        Role s = place(server).role();
        assertTrue(s.isServer());
        assertEquals(1, s.serverIndex());
        assertEquals(List.of("ctr-ps-0.ctr:6000", "ctr-ps-1.ctr:6000"), s.serverEndpoints());
        assertEquals(3, s.workerNum());
        Map<String, String> trainer = new HashMap<>(server);
        trainer.putAll(Map.of("HOSTNAME", "ctr-worker-2", "VC_TASK_INDEX", "2"));
        Role t = place(trainer).role();
        assertEquals(List.of(2, 3), List.of(t.workerIndex(), t.worldSize()));
        assertEquals("ctr-worker-0.ctr:6170", t.master());
        assertEquals(2, t.serverNum());
        trainer.put("HOSTNAME", "somewhere-else");
        assertTrue(error(trainer).contains("is in none of their VC_<TASK>_HOSTS lists"), error(trainer));
    }

    @Test
    void aJobSetPodIsNumberedJobByJob() {
        Map<String, String> env = new HashMap<>(Map.of("JOB_COMPLETION_INDEX", "1", "JOBSET_NAME", "mnist",
                "REPLICATED_JOB_NAME", "workers", "JOB_INDEX", "1", "REPLICATED_JOB_REPLICAS", "2", "PODS_PER_JOB", "2"));
        Placement.Nodes p = nodes(env);
        assertEquals(List.of(4, 3), List.of(p.nnodes(), p.nodeRank()));
        assertEquals("mnist-workers-0-0.mnist:6170", p.master());
        assertEquals("mnist-workers-1-1.mnist", p.host());
        assertEquals(List.of("mnist-workers-0-0.mnist", "mnist-workers-0-1.mnist", "mnist-workers-1-0.mnist",
                "mnist-workers-1-1.mnist"), p.hosts());
        Map<String, String> indexedJobOnly = Map.of("JOB_COMPLETION_INDEX", "1");
        assertTrue(error(indexedJobOnly).contains("but JOBSET_NAME is not: pass the pod's JobSet labels in"),
                error(indexedJobOnly));
    }

    @Test
    void slurmHostListsAndTaskCountsExpandAsSlurmDoes() {
        assertEquals(List.of("n01", "n02", "n03", "n07"), SlurmHostList.hosts("n[01-03,07]", "L"));
        assertEquals(List.of("a1", "a2", "b3"), SlurmHostList.hosts("a[1-2],b3", "L"));
        assertEquals(List.of("r1-n1", "r1-n2", "r2-n1", "r2-n2"), SlurmHostList.hosts("r[1-2]-n[1-2]", "L"));
        assertEquals(List.of("n8", "n9", "n10"), SlurmHostList.hosts("n[8-10]", "L"));
        assertEquals(List.of("vm"), SlurmHostList.hosts("vm", "L"));
        assertEquals(List.of(2, 2, 2, 1), SlurmHostList.tasksPerNode("2(x3),1", "T"));
        assertThrows(IllegalArgumentException.class, () -> SlurmHostList.hosts("n[1-3", "L"));
        assertThrows(IllegalArgumentException.class, () -> SlurmHostList.hosts("n[3-1]", "L"));
        assertThrows(IllegalArgumentException.class, () -> SlurmHostList.tasksPerNode("2(x)", "T"));
    }

    private static Map<String, String> slurmTask(int procId, int nodeId, int localId, String perNode, String nodes, int ntasks) {
        return new HashMap<>(Map.of("SLURM_JOB_ID", "4242", "SLURM_PROCID", "" + procId, "SLURM_NTASKS", "" + ntasks,
                "SLURM_NODEID", "" + nodeId, "SLURM_LOCALID", "" + localId, "SLURM_TASKS_PER_NODE", perNode,
                "SLURM_JOB_NODELIST", nodes, "SLURMD_NODENAME", "x"));
    }

    @Test
    void slurmTasksAreRanksWithTheMasterOnTheFirstNode() {
        Role r = place(slurmTask(3, 1, 1, "2(x2)", "n[01-02]", 4)).role();
        assertEquals(Role.trainer(3, 4, 1, 2, 1, 2, "n01:16242", "n02", "4242", "Slurm"), r);
        // uneven tasks per node: every task its own node to the collective, so the ranks agree on the world
        Role uneven = place(slurmTask(6, 3, 0, "2(x3),1", "n[01-03,07]", 7)).role();
        assertEquals(Role.trainer(6, 7, 0, 1, 6, 7, "n01:16242", "n07", "4242", "Slurm"), uneven);
        // one task per node: the task is a node launcher
        Placement.Nodes p = nodes(slurmTask(1, 1, 0, "1(x2)", "a[1-2]", 2));
        assertEquals(List.of(2, 1), List.of(p.nnodes(), p.nodeRank()));
        assertEquals(List.of("a1", "a2"), p.hosts());
        Map<String, String> exported = slurmTask(1, 1, 0, "1(x2)", "a[1-2]", 2);
        exported.putAll(Map.of("MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "7000"));
        assertEquals("10.0.0.1:7000", nodes(exported).master());
    }

    @Test
    void slurmWithoutATaskOrWithCyclicTasksIsAnError() {
        Map<String, String> batch = Map.of("SLURM_JOB_ID", "77", "SLURM_JOB_NODELIST", "n1");
        assertTrue(error(batch).contains("SLURM_PROCID is not set: this process runs in Slurm job 77 but not as a task"),
                error(batch));
        Map<String, String> cyclic = slurmTask(1, 1, 0, "2(x2)", "n[1-2]", 4);
        assertTrue(error(cyclic).contains("use the block distribution"), error(cyclic));
        Map<String, String> wrongCount = slurmTask(0, 0, 0, "2,1", "n[1-2]", 4);
        assertTrue(error(wrongCount).contains("gives [2, 1] tasks to 2 node(s), but the step has 4 task(s)"), error(wrongCount));
    }

    @Test
    void mpiLaunchersComeBeforeTheSlurmAllocationTheyRunIn() {
        Map<String, String> ompi = slurmTask(0, 0, 0, "1", "n1", 1);
        ompi.putAll(Map.of("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_LOCAL_RANK", "1",
                "OMPI_COMM_WORLD_LOCAL_SIZE", "2", "FLEET_MASTER", "h0:7000"));
        assertEquals(Role.trainer(3, 4, 1, 2, 1, 2, "h0:7000", "127.0.0.1", "fleet4j", "Open MPI"), place(ompi).role());
        Map<String, String> hydra = Map.of("PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "1", "MPI_LOCALNRANKS", "2",
                "MASTER_ADDR", "h0", "MASTER_PORT", "7000");
        assertEquals(Role.trainer(1, 2, 1, 2, 0, 1, "h0:7000", "127.0.0.1", "fleet4j", "MPICH/Intel MPI (PMI)"),
                place(hydra).role());
        Map<String, String> noMaster = Map.of("PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "1", "MPI_LOCALNRANKS", "2");
        assertTrue(error(noMaster).contains("set FLEET_MASTER=host:port, or MASTER_ADDR and MASTER_PORT"), error(noMaster));
        // srun --mpi=pmi2 sets PMI_RANK without MPI_LOCALRANKID: Slurm's variables describe the task
        Map<String, String> pmi2 = slurmTask(1, 0, 1, "2", "n1", 2);
        pmi2.putAll(Map.of("PMI_RANK", "1", "PMI_SIZE", "2"));
        assertEquals("Slurm", place(pmi2).scheduler());
    }
}
