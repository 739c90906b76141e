package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.cluster.Role;
import org.fleet4j.fleet.role.ClusterDetector;
import org.fleet4j.fleet.role.Placement;
import org.fleet4j.launch.NamedPrograms;
import org.junit.jupiter.api.Test;

/**
 * docs/examples/kubernetes/*.yaml against what each operator accepts and does, with no cluster: the fields its CRD
 * defines, the replica types, container and port names it looks for, and the variables it sets in each pod, computed
 * as its controller computes them; every pod's variables, with the manifest's own (secrets and downward-API labels
 * resolved), then go through Fleet4J's {@link ClusterDetector}, which must place the pods as one job. Planted
 * mistakes (a renamed container, a missing port, an unknown field, no token) are each caught.
 */
class KubernetesManifestsTest {
    private static final Path DIR = Path.of("").toAbsolutePath().getParent().resolve("docs/examples/kubernetes");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Pattern LABEL = Pattern.compile("metadata\\.labels\\['(.+)'\\]");
    private static final Pattern REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    /**
     * A Kubeflow training-operator v1 job type, from its CRD (manifests/base/crds/kubeflow.org_pytorchjobs.yaml and
     * _paddlejobs.yaml of v1.9.0: spec's properties, each ReplicaSpec's) and its API constants
     * (pkg/apis/kubeflow.org/v1/pytorch_types.go, paddlepaddle_types.go: replica types, container and port names).
     */
    private record Kubeflow(String kind, Set<String> specFields, String replicasField, String container, String portName,
                            int defaultPort) {
        static final Set<String> REPLICA_TYPES = Set.of("Master", "Worker");
        static final Set<String> REPLICA_FIELDS = Set.of("replicas", "restartPolicy", "template");
    }

    private static final Kubeflow PYTORCHJOB = new Kubeflow("PyTorchJob",
            Set.of("elasticPolicy", "nprocPerNode", "pytorchReplicaSpecs", "runPolicy"), "pytorchReplicaSpecs", "pytorch",
            "pytorchjob-port", 23456);
    private static final Kubeflow PADDLEJOB = new Kubeflow("PaddleJob",
            Set.of("elasticPolicy", "paddleReplicaSpecs", "runPolicy"), "paddleReplicaSpecs", "paddle", "master", 36543);
    /** batch.volcano.sh/v1alpha1 Job: config/crd/volcano/bases/batch.volcano.sh_jobs.yaml, spec's and a task's properties. */
    private static final Set<String> VOLCANO_SPEC = Set.of("maxRetry", "minAvailable", "minSuccess", "networkTopology",
            "plugins", "policies", "priorityClassName", "queue", "runningEstimate", "schedulerName", "tasks",
            "ttlSecondsAfterFinished", "volumes");
    private static final Set<String> VOLCANO_TASK = Set.of("dependsOn", "maxRetry", "minAvailable", "name", "partitionPolicy",
            "policies", "replicas", "template", "topologyPolicy");
    /** jobset.x-k8s.io/v1alpha2 JobSet: api/jobset/v1alpha2/jobset_types.go, JobSetSpec's and ReplicatedJob's fields. */
    private static final Set<String> JOBSET_SPEC = Set.of("replicatedJobs", "network", "successPolicy", "failurePolicy",
            "startupPolicy", "suspend", "coordinator", "managedBy", "ttlSecondsAfterFinished");
    private static final Set<String> JOBSET_REPLICATED_JOB = Set.of("name", "groupName", "template", "replicas", "dependsOn");

    private static JsonNode manifest(String name) throws IOException {
        return YAML.readTree(Files.readString(DIR.resolve(name)));
    }

    private static void fieldsWithin(JsonNode node, Set<String> allowed, String where) {
        node.fieldNames().forEachRemaining(f -> {
            if (!allowed.contains(f)) {
                throw new AssertionError(where + " has field " + f + ", which the CRD does not define (it has " + allowed + ")");
            }
        });
    }

    /** The one container of a pod template, checked to be the one the operator looks for. */
    private static JsonNode container(JsonNode template, String name, String where) {
        JsonNode containers = template.path("spec").path("containers");
        for (JsonNode c : containers) {
            if (name == null || name.equals(c.path("name").asText())) {
                if (c.has("command")) {
                    throw new AssertionError(where + ": container " + c.path("name").asText() + " sets a command; the"
                            + " image's entrypoint, bin/fleetrun, must run (give the program in args)");
                }
                return c;
            }
        }
        throw new AssertionError(where + " has no container named " + name + "; the operator finds the job's port on that"
                + " container only");
    }

    private static int port(JsonNode container, String portName, String where) {
        for (JsonNode p : container.path("ports")) {
            if (portName.equals(p.path("name").asText())) {
                return p.path("containerPort").asInt();
            }
        }
        throw new AssertionError(where + ": container " + container.path("name").asText() + " has no port named " + portName);
    }

    /** The container's own variables as the kubelet resolves them: secrets, the pod's labels and IP, $(VAR) references. */
    private static Map<String, String> containerEnv(JsonNode container, JsonNode pod, Map<String, String> labels,
                                                    Map<String, String> operatorEnv, String where) {
        Map<String, String> env = new LinkedHashMap<>(operatorEnv);
        boolean token = false;
        for (JsonNode e : container.path("env")) {
            String name = e.path("name").asText();
            JsonNode from = e.path("valueFrom");
            String value;
            if (from.has("secretKeyRef")) {
                value = "secret:" + from.path("secretKeyRef").path("name").asText() + "/" + from.path("secretKeyRef").path("key").asText();
            } else if (from.has("fieldRef")) {
                String path = from.path("fieldRef").path("fieldPath").asText();
                Matcher m = LABEL.matcher(path);
                assertTrue(m.matches() || path.equals("status.podIP"), where + ": env " + name + " reads " + path);
                value = m.matches() ? labels.get(m.group(1)) : "10.1.0." + labels.size();
                assertTrue(value != null, where + ": env " + name + " reads label " + path + ", which the operator does not set"
                        + " (it sets " + labels.keySet() + ")");
            } else {
                value = e.path("value").asText();
            }
            env.put(name, value);
            token |= name.equals("FLEET_JOB_TOKEN") && value.startsWith("secret:")
                    || name.equals("FLEET_JOB_TOKEN_FILE") && secretMounted(container, pod, value);
        }
        if (!token) {
            throw new AssertionError(where + ": no job token: give FLEET_JOB_TOKEN from a secretKeyRef, or FLEET_JOB_TOKEN_FILE"
                    + " in a Secret volume of mode 0400 or 0600 (a job of several processes is refused without one)");
        }
        // the operator's own variables are set after the container's and may refer to them, as PADDLE_MASTER does
        env.replaceAll((k, v) -> REFERENCE.matcher(v).replaceAll(r -> Matcher.quoteReplacement(env.getOrDefault(r.group(1), r.group()))));
        return env;
    }

    private static boolean secretMounted(JsonNode container, JsonNode pod, String file) {
        for (JsonNode mount : container.path("volumeMounts")) {
            if (file.startsWith(mount.path("mountPath").asText() + "/")) {
                for (JsonNode v : pod.path("spec").path("volumes")) {
                    if (v.path("name").asText().equals(mount.path("name").asText()) && v.has("secret")) {
                        int mode = v.path("secret").path("defaultMode").asInt(0644);
                        return mode == 0400 || mode == 0600;
                    }
                }
            }
        }
        return false;
    }

    private static String program(JsonNode container) {
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        for (int i = 0; i < args.size(); i++) {
            if (!args.get(i).startsWith("--")) {
                return args.get(i);
            }
            i++; // the option's value
        }
        return null;
    }

    private static void knownProgram(JsonNode container, String where) {
        String program = program(container);
        assertTrue(NamedPrograms.all().containsKey(program), where + ": args name the program " + program
                + ", which is not one of fleetrun's " + NamedPrograms.all().keySet());
    }

    /** Each pod of a Kubeflow job, with the variables training-operator v1's envvar.go gives it. */
    private static List<Map<String, String>> kubeflowPods(JsonNode job, Kubeflow type) {
        String name = job.path("metadata").path("name").asText();
        assertEquals("kubeflow.org/v1", job.path("apiVersion").asText());
        assertEquals(type.kind(), job.path("kind").asText());
        JsonNode spec = job.path("spec");
        fieldsWithin(spec, type.specFields(), type.kind() + " spec");
        JsonNode replicas = spec.path(type.replicasField());
        fieldsWithin(replicas, Kubeflow.REPLICA_TYPES, type.kind() + " " + type.replicasField());
        int total = 0;
        for (JsonNode r : replicas) {
            fieldsWithin(r, Kubeflow.REPLICA_FIELDS, type.kind() + " replica spec");
            total += r.path("replicas").asInt(1);
            assertEquals("Never", r.path("restartPolicy").asText(), "fleetrun does not restart ranks yet: a failed pod must"
                    + " fail the job rather than rejoin it");
        }
        boolean master = replicas.has("Master");
        String nproc = spec.path("nprocPerNode").asText("auto");
        int worldPerPod = nproc.matches("\\d+") ? Integer.parseInt(nproc) : 1;
        List<Map<String, String>> pods = new ArrayList<>();
        for (String rtype : List.of("Master", "Worker")) {
            JsonNode r = replicas.path(rtype);
            for (int i = 0; i < r.path("replicas").asInt(0); i++) {
                String where = name + "-" + rtype.toLowerCase(Locale.ROOT) + "-" + i;
                JsonNode template = r.path("template");
                JsonNode c = container(template, type.container(), where);
                knownProgram(c, where);
                Map<String, String> labels = Map.of("training.kubeflow.org/replica-index", "" + i,
                        "training.kubeflow.org/replica-type", rtype.toLowerCase(Locale.ROOT),
                        "training.kubeflow.org/job-name", name);
                Map<String, String> op = new LinkedHashMap<>();
                op.put("HOSTNAME", where);
                if (type == PYTORCHJOB) {
                    op.put("PYTHONUNBUFFERED", "0");
                    if (master) {
                        op.put("MASTER_PORT", "" + port(container(replicas.path("Master").path("template"), type.container(),
                                name + " Master"), type.portName(), name + " Master"));
                        op.put("MASTER_ADDR", name + "-master-0");
                        int rank = rtype.equals("Worker") ? i + 1 : i;
                        op.put("WORLD_SIZE", "" + total * worldPerPod);
                        op.put("RANK", "" + rank);
                        op.put("PET_NPROC_PER_NODE", nproc);
                        op.put("PET_NODE_RANK", "" + rank);
                    }
                    op.put("PET_NNODES", "" + total);
                } else {
                    op.put("PYTHONUNBUFFERED", "1");
                    op.put("PADDLE_JOB_ID", name);
                    op.put("PADDLE_NNODES", "" + total);
                    assertTrue(!master, "a PaddleJob with a Master replica is Paddle's parameter-server mode");
                    port(c, type.portName(), where); // else the operator falls back to its default port
                    String masterPort = "" + port(container(replicas.path("Worker").path("template"), type.container(), name),
                            type.portName(), name);
                    op.put("PADDLE_MASTER", i == 0 ? "$(POD_IP_DUMMY):" + masterPort : name + "-worker-0:" + masterPort);
                    if (i == 0) {
                        op.put("POD_IP_DUMMY", "10.1.0.7");
                    }
                }
                pods.add(containerEnv(c, template, labels, op, where));
            }
        }
        return pods;
    }

    /** Each pod of a Volcano Job with the env and svc plugins, as env.go and svc.go set their variables. */
    private static List<Map<String, String>> volcanoPods(JsonNode job) {
        assertEquals("batch.volcano.sh/v1alpha1", job.path("apiVersion").asText());
        assertEquals("Job", job.path("kind").asText());
        String name = job.path("metadata").path("name").asText();
        JsonNode spec = job.path("spec");
        fieldsWithin(spec, VOLCANO_SPEC, "Volcano Job spec");
        assertTrue(spec.path("plugins").has("env") && spec.path("plugins").has("svc"), "the env and svc plugins give each"
                + " pod its index and every pod's host name");
        Map<String, String> hostVars = new LinkedHashMap<>();
        int total = 0;
        for (JsonNode task : spec.path("tasks")) {
            fieldsWithin(task, VOLCANO_TASK, "Volcano task");
            String t = task.path("name").asText();
            List<String> hosts = new ArrayList<>();
            for (int i = 0; i < task.path("replicas").asInt(); i++) {
                hosts.add(name + "-" + t + "-" + i + "." + name);
            }
            String key = t.replace("-", "_").toUpperCase(Locale.ROOT);
            hostVars.put("VC_" + key + "_HOSTS", String.join(",", hosts));
            hostVars.put("VC_" + key + "_NUM", "" + hosts.size());
            total += hosts.size();
        }
        assertEquals(total, spec.path("minAvailable").asInt(), "gang scheduling: every pod of the job starts, or none");
        List<Map<String, String>> pods = new ArrayList<>();
        for (JsonNode task : spec.path("tasks")) {
            for (int i = 0; i < task.path("replicas").asInt(); i++) {
                String where = name + "-" + task.path("name").asText() + "-" + i;
                JsonNode c = container(task.path("template"), null, where);
                knownProgram(c, where);
                assertEquals("Never", task.path("template").path("spec").path("restartPolicy").asText(), where);
                Map<String, String> op = new LinkedHashMap<>(hostVars);
                op.putAll(Map.of("VC_TASK_INDEX", "" + i, "VK_TASK_INDEX", "" + i, "HOSTNAME", where));
                pods.add(containerEnv(c, task.path("template"), Map.of(), op, where));
            }
        }
        return pods;
    }

    /** Each pod of a JobSet: JOB_COMPLETION_INDEX from its Indexed Job, the JobSet labels its downward API reads. */
    private static List<Map<String, String>> jobSetPods(JsonNode jobSet) {
        assertEquals("jobset.x-k8s.io/v1alpha2", jobSet.path("apiVersion").asText());
        assertEquals("JobSet", jobSet.path("kind").asText());
        String name = jobSet.path("metadata").path("name").asText();
        fieldsWithin(jobSet.path("spec"), JOBSET_SPEC, "JobSet spec");
        List<Map<String, String>> pods = new ArrayList<>();
        for (JsonNode rj : jobSet.path("spec").path("replicatedJobs")) {
            fieldsWithin(rj, JOBSET_REPLICATED_JOB, "JobSet replicatedJob");
            JsonNode job = rj.path("template").path("spec");
            assertEquals("Indexed", job.path("completionMode").asText("Indexed"), "JobSet makes Indexed Jobs");
            int replicas = rj.path("replicas").asInt(1);
            for (int j = 0; j < replicas; j++) {
                for (int p = 0; p < job.path("parallelism").asInt(1); p++) {
                    String where = name + "-" + rj.path("name").asText() + "-" + j + "-" + p;
                    JsonNode c = container(job.path("template"), null, where);
                    knownProgram(c, where);
                    Map<String, String> labels = Map.of("jobset.sigs.k8s.io/jobset-name", name,
                            "jobset.sigs.k8s.io/replicatedjob-name", rj.path("name").asText(),
                            "jobset.sigs.k8s.io/job-index", "" + j, "jobset.sigs.k8s.io/replicatedjob-replicas", "" + replicas);
                    pods.add(containerEnv(c, job.path("template"), labels, Map.of("JOB_COMPLETION_INDEX", "" + p,
                            "HOSTNAME", where), where));
                }
            }
        }
        return pods;
    }

    /** Every pod a node of one job: the same scheduler, node count and master, node ranks 0..N-1 in pod order. */
    private static void oneJobOfNodes(List<Map<String, String>> pods, String scheduler, int ranksPerPod) {
        oneJobOfNodes(pods, scheduler, ranksPerPod, Map.of());
    }

    /** As above; {@code sameHost} maps a pod's IP to the service name that resolves to it. */
    private static void oneJobOfNodes(List<Map<String, String>> pods, String scheduler, int ranksPerPod,
                                      Map<String, String> sameHost) {
        String master = null;
        for (int i = 0; i < pods.size(); i++) {
            Placement.Nodes p = (Placement.Nodes) ClusterDetector.all().detect(pods.get(i)).orElseThrow();
            assertEquals(scheduler, p.scheduler());
            assertEquals(List.of(pods.size(), i), List.of(p.nnodes(), p.nodeRank()), "pod " + i + ": " + p.variables());
            assertEquals(ranksPerPod, p.nprocPerNode() == null ? 1 : p.nprocPerNode(), "pod " + i);
            String host = p.master().substring(0, p.master().lastIndexOf(':'));
            String named = sameHost.getOrDefault(host, host) + p.master().substring(p.master().lastIndexOf(':'));
            master = master == null ? named : master;
            assertEquals(master, named, "pod " + i + " meets the others at the same master");
        }
    }

    @Test
    void thePyTorchJobIsTwoPodsOfTwoRanks() throws Exception {
        List<Map<String, String>> pods = kubeflowPods(manifest("pytorchjob.yaml"), PYTORCHJOB);
        oneJobOfNodes(pods, "PyTorchJob (Kubeflow training-operator)", 2);
        assertEquals("mnist-master-0:23456", ((Placement.Nodes) ClusterDetector.all().detect(pods.get(1)).orElseThrow()).master());
    }

    @Test
    void thePaddleJobIsTwoPodsRankedByTheirReplicaIndex() throws Exception {
        // worker 0 gets its own pod IP as PADDLE_MASTER, the others its service name, which resolves to that IP
        oneJobOfNodes(kubeflowPods(manifest("paddlejob.yaml"), PADDLEJOB), "PaddleJob (Kubeflow training-operator)", 1,
                Map.of("10.1.0.7", "mnist-worker-0"));
    }

    @Test
    void theVolcanoJobIsTwoPodsOfItsWorkerTask() throws Exception {
        oneJobOfNodes(volcanoPods(manifest("volcano-job.yaml")), "Volcano", 1);
    }

    @Test
    void theJobSetIsTwoPodsOfOneJob() throws Exception {
        oneJobOfNodes(jobSetPods(manifest("jobset.yaml")), "JobSet", 1);
    }

    @Test
    void theVolcanoParameterServerJobIsTwoServersAndTwoTrainers() throws Exception {
        List<Map<String, String>> pods = volcanoPods(manifest("volcano-ps.yaml"));
        List<Role> roles = pods.stream().map(env -> ClusterDetector.all().detect(env).orElseThrow().role()).toList();
        assertEquals(List.of(true, true, false, false), roles.stream().map(Role::isServer).toList());
        assertEquals(List.of(0, 1), List.of(roles.get(0).serverIndex(), roles.get(1).serverIndex()));
        assertEquals(List.of(0, 1), List.of(roles.get(2).workerIndex(), roles.get(3).workerIndex()));
        for (Role r : roles) {
            assertEquals(List.of("ctr-ps-0.ctr:6000", "ctr-ps-1.ctr:6000"), r.serverEndpoints());
            assertEquals(2, r.workerNum());
        }
        assertEquals("ctr-worker-0.ctr:6170", roles.get(3).master());
        assertEquals("ctr", program(volcanoJob(manifest("volcano-ps.yaml"))));
    }

    private static JsonNode volcanoJob(JsonNode job) {
        return job.path("spec").path("tasks").get(1).path("template").path("spec").path("containers").get(0);
    }

    @Test
    void theImageRunsFleetrunAsItsEntrypoint() throws Exception {
        String pom = Files.readString(DIR.getParent().getParent().getParent().resolve("examples/pom.xml"));
        assertTrue(pom.contains("<entrypoint>/opt/fleet4j/bin/fleetrun</entrypoint>"), "the manifests give fleetrun's"
                + " arguments only");
    }

    @Test
    void plantedMistakesAreCaught() throws Exception {
        ObjectNode renamed = (ObjectNode) manifest("pytorchjob.yaml");
        ((ObjectNode) renamed.at("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0")).put("name", "main");
        assertTrue(assertThrows(AssertionError.class, () -> kubeflowPods(renamed, PYTORCHJOB)).getMessage()
                .contains("has no container named pytorch"));

        ObjectNode noPort = (ObjectNode) manifest("pytorchjob.yaml");
        ((ObjectNode) noPort.at("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0")).remove("ports");
        assertTrue(assertThrows(AssertionError.class, () -> kubeflowPods(noPort, PYTORCHJOB)).getMessage()
                .contains("has no port named pytorchjob-port"));

        ObjectNode unknownField = (ObjectNode) manifest("paddlejob.yaml");
        ((ObjectNode) unknownField.at("/spec")).put("nprocPerNode", "2");
        assertTrue(assertThrows(AssertionError.class, () -> kubeflowPods(unknownField, PADDLEJOB)).getMessage()
                .contains("has field nprocPerNode, which the CRD does not define"));

        ObjectNode noToken = (ObjectNode) manifest("volcano-job.yaml");
        ((ObjectNode) noToken.at("/spec/tasks/0/template/spec/containers/0")).remove("env");
        assertTrue(assertThrows(AssertionError.class, () -> volcanoPods(noToken)).getMessage().contains("no job token"));

        ObjectNode wrongRank = (ObjectNode) manifest("paddlejob.yaml");
        ((ObjectNode) wrongRank.at("/spec/paddleReplicaSpecs/Worker/template/spec/containers/0/env/0/valueFrom/fieldRef"))
                .put("fieldPath", "metadata.labels['training.kubeflow.org/replica-type']");
        assertThrows(IllegalArgumentException.class, () -> oneJobOfNodes(kubeflowPods(wrongRank, PADDLEJOB),
                "PaddleJob (Kubeflow training-operator)", 1), "PADDLE_RANK=worker is not a rank");
    }

    /** The file a manifest needs a token from is what token-secret.sh makes. */
    @Test
    void theSecretScriptMakesTheSecretTheManifestsRead() throws Exception {
        String script = Files.readString(DIR.resolve("token-secret.sh"));
        assertTrue(script.contains("fleet4j-job-token") && script.contains("--from-literal=token="), script);
        Map<String, Integer> secretUses = new HashMap<>();
        for (String m : List.of("pytorchjob.yaml", "paddlejob.yaml", "volcano-job.yaml", "volcano-ps.yaml", "jobset.yaml")) {
            String text = Files.readString(DIR.resolve(m));
            secretUses.put(m, text.split("fleet4j-job-token", -1).length - 1);
        }
        assertTrue(secretUses.values().stream().allMatch(n -> n > 0), secretUses.toString());
    }
}
