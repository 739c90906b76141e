package org.fleet4j.gpu.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Regularizer;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.KernelModule;
import org.fleet4j.gpu.KernelSignatures;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Without a GPU: the kernel table covers every op of the mnist and mlp_perf programs (as the examples build them, on
 * one and two ranks, with and without the compiler's fusions), the training step takes no host fallback, and ops
 * without a GPU kernel are refused naming them. Plans are prepared without a device; nothing here loads CUDA.
 */
class GpuKernelTableTest {
    private static final int[] MNIST = {784, 512, 512, 10};
    /** A group that is only attached, never called: preparing a plan must not touch it. */
    private static final ProcessGroup ATTACHED = (ProcessGroup) Proxy.newProxyInstance(
            ProcessGroup.class.getClassLoader(), new Class<?>[]{ProcessGroup.class}, (proxy, method, args) -> {
                throw new AssertionError("the group was used while preparing a plan: " + method.getName());
            });

    @RegisterExtension
    static final OneRankJob JOB = new OneRankJob();

    private static GpuPlan prepare(Program program, ProcessGroup ncclGroup) {
        return new GpuPlan(program, null, List.of(), ring -> ncclGroup, JOB.context());
    }

    private static Set<String> opTypes(Program p) {
        Set<String> types = new TreeSet<>();
        p.globalBlock().ops().forEach(op -> types.add(op.type()));
        return types;
    }

    @ParameterizedTest
    @ValueSource(strings = {"sgd", "momentum", "adam"})
    void everyOpOfOneRankTrainingHasAGpuKernel(String optimizer) {
        for (DistributedStrategy s : List.of(new DistributedStrategy(), MlpPrograms.allFusions())) {
            Mlp net = MlpPrograms.build(MNIST, optimizer, 1, s);
            GpuPlan main = prepare(net.main(), null);
            assertEquals(Set.of(), main.hostOps, "main program of " + optimizer + " with ops " + opTypes(net.main()));
            assertTrue(opTypes(net.main()).containsAll(List.of("matmul", "matmul_grad", "softmax_with_cross_entropy_grad",
                    "lr_schedule", "increment")), "the test sees the whole training step: " + opTypes(net.main()));
            assertEquals(Set.of(), prepare(net.test(), null).hostOps);
            assertTrue(Set.of("uniform_random", "fill_constant").containsAll(prepare(net.startup(), null).hostOps),
                    "startup: " + prepare(net.startup(), null).hostOps);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sgd", "momentum", "adam"})
    void twoRankTrainingReducesThroughTheHostUnlessAnNcclGroupIsAttached(String optimizer) {
        Mlp plain = MlpPrograms.build(MNIST, optimizer, 2, new DistributedStrategy());
        Mlp fused = MlpPrograms.build(MNIST, optimizer, 2, MlpPrograms.allFusions());
        assertTrue(opTypes(fused.main()).containsAll(List.of("gather_bucket", "fused_elemwise_add_activation",
                "fused_elemwise_add_activation_grad", "fused_" + optimizer)), "fusions applied: " + opTypes(fused.main()));
        for (Mlp net : List.of(plain, fused)) {
            assertTrue(opTypes(net.main()).contains("c_allreduce"));
            assertEquals(Set.of("c_allreduce"), prepare(net.main(), null).hostOps);
            assertEquals(Set.of(), prepare(net.main(), ATTACHED).hostOps);
            assertTrue(prepare(net.startup(), null).hostOps.contains("c_broadcast"));
            assertTrue(!prepare(net.startup(), ATTACHED).hostOps.contains("c_broadcast"));
        }
    }

    /**
     * The strategy's other rewrites of these programs: gradient merge (merge_step, scale, conditional blocks), the
     * overlapped allreduce (c_allreduce_start, c_wait), inplace reuse, unused-parameter search and hierarchical
     * allreduce. On one rank only gradient merge's counter takes the host; on two the allreduce too, until a group is
     * attached.
     */
    @ParameterizedTest
    @ValueSource(strings = {"gradient_merge", "sync_nccl_allreduce", "enable_inplace", "find_unused_parameters",
            "use_hierarchical_allreduce"})
    void theOtherPassesOfTheStrategyPrepareForTheGpuToo(String option) {
        DistributedStrategy s = new DistributedStrategy().set(option, !option.equals("sync_nccl_allreduce"));
        for (int ranks : new int[]{1, 2}) {
            Mlp net = MlpPrograms.build(MNIST, "momentum", ranks, s);
            Set<String> hostOnly = option.equals("gradient_merge") ? Set.of("merge_step") : Set.of();
            assertEquals(hostOnly, prepare(net.main(), ATTACHED).hostOps, option + " on " + ranks + " ranks: "
                    + opTypes(net.main()));
            Set<String> allowed = new TreeSet<>(hostOnly);
            allowed.addAll(List.of("c_allreduce", "c_allreduce_start"));
            assertTrue(allowed.containsAll(prepare(net.main(), null).hostOps), option + ": " + prepare(net.main(), null).hostOps);
        }
        if (option.equals("sync_nccl_allreduce")) {
            Mlp net = MlpPrograms.build(MNIST, "momentum", 2, s);
            assertTrue(opTypes(net.main()).containsAll(List.of("c_allreduce_start", "c_wait")), "overlap applied");
        }
        if (option.equals("gradient_merge")) {
            assertTrue(opTypes(MlpPrograms.build(MNIST, "momentum", 1, s).main()).containsAll(
                    List.of("merge_step", "scale", "conditional_begin")), "gradient merge applied");
        }
    }

    @Test
    void everyOpTypeOfTheProgramsIsCoveredAndEveryHostFallbackIsDocumented() throws IOException {
        Set<String> types = new TreeSet<>();
        for (String opt : List.of("sgd", "momentum", "adam")) {
            for (int ranks : new int[]{1, 2}) {
                for (DistributedStrategy s : List.of(new DistributedStrategy(), MlpPrograms.allFusions())) {
                    Mlp net = MlpPrograms.build(MNIST, opt, ranks, s);
                    Stream.of(net.main(), net.startup(), net.test()).forEach(p -> types.addAll(opTypes(p)));
                }
            }
        }
        List<String> uncovered = types.stream().filter(t -> !GpuKernelTable.covers(t)).toList();
        assertEquals(List.of(), uncovered, "op types of mnist/mlp_perf with neither a GPU kernel nor a host fallback");
        String doc = Files.readString(Path.of("..", "docs", "GPU.md"));
        for (String t : GpuKernelTable.hostFallbacks().keySet()) {
            assertTrue(doc.contains("`" + t + "`"), "docs/GPU.md does not name the host fallback `" + t + "`");
        }
    }

    @Test
    void regularizersRunOnTheGpuWithL1sSignOnTheHost() {
        Layers nn = new Layers(new Program(), new Program());
        Var x = nn.data("x", DType.F32, -1, 8);
        Var y = nn.data("y", DType.I64, -1, 1);
        Var h = nn.fc(x, 16, "relu", ParamAttr.DEFAULT.withRegularizer(Regularizer.l2Decay(1e-4f)), ParamAttr.DEFAULT);
        Var logits = nn.fc(h, 4, null, ParamAttr.DEFAULT.withRegularizer(Regularizer.l1Decay(1e-4f)), ParamAttr.DEFAULT);
        new SGD(0.1).minimize(nn.mean(nn.softmaxWithCrossEntropy(logits, y)));
        assertEquals(Set.of("sign"), prepare(nn.main(), null).hostOps);
    }

    @Test
    void anOpWithoutAGpuKernelIsRefusedNamingIt() {
        Program p = new Program();
        var b = p.globalBlock();
        b.createVar("x", DType.F32, 2, 3).setData(true);
        b.createVar("y", DType.F32, 2, 3);
        b.appendOp("softmax", Map.of("X", List.of("x")), Map.of("Out", List.of("y")), Map.of());
        var e = assertThrows(ExecutionException.class, () -> prepare(p, null));
        assertTrue(e.getMessage().startsWith("op #0 softmax has no GPU kernel (no gpu kernel and no host fallback; GPU"
                + " kernels: ["), e.getMessage());
        assertTrue(e.getMessage().contains("Run this program on the CPU (FLEET_DEVICE=cpu"), e.getMessage());
    }

    @Test
    void aFusedActivationWithoutKernelIsRefusedNamingTheFunctor() {
        Op op = new Op("fused_elemwise_add_activation", Map.of("X", List.of("x"), "Y", List.of("y")),
                Map.of("Out", List.of("o")), Map.of("functor", "scale", "scale", 1f, "bias", 0f, "bias_after_scale", true));
        var e = assertThrows(IllegalArgumentException.class, () -> GpuKernelTable.kernelFor(op, 3));
        assertEquals("op fused_elemwise_add_activation with functor 'scale' has no GPU kernel (relu, sigmoid and tanh"
                + " have)", e.getMessage());
    }

    @Test
    void attributesOutsideAKernelsReachTakeTheHostFallback() {
        Op momentum = new Op("momentum", Map.of(), Map.of(), Map.of("mu", 0.9f, "use_nesterov", false,
                "weight_decay", 0.01f));
        assertEquals(null, GpuKernelTable.kernelFor(momentum, 0));
        Op warmup = new Op("lr_schedule", Map.of(), Map.of(), Map.of("base_lr", 0.1f, "decay", "constant",
                "warmup_steps", 10));
        assertEquals(null, GpuKernelTable.kernelFor(warmup, 0));
        Op ints = new Op("fill_constant", Map.of(), Map.of(), Map.of("shape", new long[]{1}, "dtype", "int64",
                "value", 0f));
        assertEquals(null, GpuKernelTable.kernelFor(ints, 0));
    }

    /**
     * Every launch in the executor's sources that names its kernel literally passes as many arguments as the kernel
     * has C parameters (their kinds are checked at each launch, see KernelSignaturesTest): a miscounted launch fails
     * here, without a GPU.
     */
    @Test
    void everyLiteralLaunchPassesAsManyArgumentsAsItsKernelHasParameters() throws IOException {
        KernelSignatures signatures = new KernelSignatures(KernelModule.all());
        Pattern call = Pattern.compile("(?:launchElements|kernels\\(\\)\\.launch)\\(\"(\\w+)\"");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> files = Files.list(Path.of("src/main/java/org/fleet4j/gpu/exec"))) {
            for (Path f : files.toList()) {
                String text = Files.readString(f);
                Matcher m = call.matcher(text);
                while (m.find()) {
                    List<String> args = arguments(text, m.start(1) - 2);
                    int passed = args.size() - 2; // the kernel's name, then the element count or the launch shape
                    int expected = signatures.parameters(m.group(1)).size();
                    checked++;
                    if (passed != expected) {
                        wrong.add(f.getFileName() + ": " + m.group(1) + " gets " + passed + " arguments "
                                + args.subList(2, args.size()) + ", has " + expected + " parameters");
                    }
                }
            }
        }
        assertTrue(checked >= 30, "found only " + checked + " launches");
        assertEquals(List.of(), wrong);
    }

    /** The top-level comma-separated arguments of the call whose '(' is at {@code open}. */
    private static List<String> arguments(String text, int open) {
        List<String> args = new ArrayList<>();
        int depth = 0;
        int start = open + 1;
        for (int i = open; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                args.add(text.substring(start, i).trim());
                return args;
            } else if (c == ',' && depth == 1) {
                args.add(text.substring(start, i).trim());
                start = i + 1;
            }
        }
        throw new IllegalStateException("unclosed call at offset " + open);
    }

    /** Every kernel name the executor's sources spell out is an entry point of a shipped CUDA module. */
    @Test
    void everyKernelTheExecutorNamesExistsInTheCudaSources() throws IOException {
        Set<String> entries = new HashSet<>();
        KernelModule.all().forEach(m -> entries.addAll(m.entryPoints()));
        Pattern literal = Pattern.compile("\"([a-z][a-z0-9_]*_(?:f32|i64)|accuracy_finish)\"");
        List<String> missing = new ArrayList<>();
        int found = 0;
        try (Stream<Path> files = Files.list(Path.of("src/main/java/org/fleet4j/gpu/exec"))) {
            for (Path f : files.toList()) {
                Matcher m = literal.matcher(Files.readString(f));
                while (m.find()) {
                    found++;
                    if (!entries.contains(m.group(1))) {
                        missing.add(f.getFileName() + ": " + m.group(1));
                    }
                }
            }
        }
        assertTrue(found >= 10, "found only " + found + " kernel names");
        assertEquals(List.of(), missing);
        for (String act : List.of("relu", "sigmoid", "tanh", "gelu")) {
            assertTrue(entries.contains(act + "_f32") && entries.contains(act + "_grad_f32"), act);
        }
        for (String kind : List.of("add", "sub", "mul", "div")) {
            assertTrue(entries.contains("elementwise_" + kind + "_f32"), kind);
        }
    }
}
