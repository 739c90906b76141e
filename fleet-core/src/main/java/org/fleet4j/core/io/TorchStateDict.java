package org.fleet4j.core.io;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.device.ProgramRunner;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * A model's weights as a PyTorch {@code state_dict} saved with safetensors, for a PyTorch model made of the same layers
 * in the same order: {@code nn.Linear} for fc (its weight is {@code [out, in]}, fc's {@code [in, out]}: transposed
 * both ways; the transformer layers' linear weights are already {@code [out, in]}), {@code nn.Conv2d} for conv2d and
 * depthwise_conv2d and {@code nn.ConvTranspose2d} for conv2d_transpose (the same weight layouts; the bias is the
 * parameter of the {@code elementwise_add} that follows), {@code nn.Embedding} for embedding, {@code nn.BatchNorm1d}
 * and {@code nn.BatchNorm2d} for batch_norm (weight, bias, running_mean, running_var), {@code nn.GroupNorm} for
 * group_norm (weight, bias), {@code nn.LayerNorm} for layer_norm (weight, bias). The layers are found in the program's
 * ops, in order, and paired with the PyTorch module names given (e.g. "0", "2" for an {@code nn.Sequential}, or
 * "fc1", "fc2"), or ({@link #byLayerNames}) each with its own layer name. Weights of no such layer keep their own
 * names.
 */
public final class TorchStateDict {
    /** PyTorch's count of batch-norm updates: Fleet4J's batch norm always uses its momentum, so it has no use for it. */
    static final String BATCHES_TRACKED = "num_batches_tracked";

    private final Program program;
    /** PyTorch name to the Fleet4J weight, for every weight of the listed layers. */
    private final Map<String, String> toFleet = new LinkedHashMap<>();
    private final Map<String, String> toTorch = new HashMap<>();
    /** The Fleet4J names of fc weights, which are transposed. */
    private final Set<String> linearWeights = new HashSet<>();
    private final List<String> batchNormModules = new ArrayList<>();

    private TorchStateDict(Program program) {
        this.program = program;
    }

    /** The pairing of {@code program}'s layers, in op order, with {@code torchModules}; fails if the counts differ. */
    public static TorchStateDict of(Program program, List<String> torchModules) {
        TorchStateDict d = new TorchStateDict(program);
        List<String> found = d.findLayers(torchModules);
        if (found.size() != torchModules.size()) {
            throw new IllegalArgumentException("the program has " + found.size() + " fc, conv, embedding and norm layers "
                    + found + " but " + torchModules.size() + " PyTorch modules were named " + torchModules
                    + "; name one PyTorch module per layer, in the program's order");
        }
        return d;
    }

    /**
     * The pairing of {@code program}'s layers with the PyTorch modules of their layer names: a layer whose weight is
     * {@code transformer.h.0.attn.c_attn.w_0} (the layer named {@code transformer.h.0.attn.c_attn}) is the module
     * {@code transformer.h.0.attn.c_attn}, so a nanoGPT state_dict ({@code transformer.h.0.attn.c_attn.weight}) loads
     * into the layers that {@code Layers.transformerBlock(x, ..., "transformer.h.0")} builds.
     */
    public static TorchStateDict byLayerNames(Program program) {
        TorchStateDict d = new TorchStateDict(program);
        d.findLayers(null);
        return d;
    }

    /** The layer name of a parameter named {@code <layer>.<suffix>}, or the name itself when it has no suffix. */
    private static String layerOf(String parameter) {
        int dot = parameter.lastIndexOf('.');
        return dot > 0 ? parameter.substring(0, dot) : parameter;
    }

    /**
     * Walks the ops, pairing each layer with the next module name (or, when {@code modules} is null, the module of its
     * layer name); returns the layers found, described.
     */
    private List<String> findLayers(List<String> modules) {
        Block b = program.globalBlock();
        List<String> found = new ArrayList<>();
        Map<String, String> biasOfLayerOut = new HashMap<>();
        for (Op op : b.ops()) {
            String next = modules == null || found.size() >= modules.size() ? null : modules.get(found.size());
            String weight = switch (op.type()) {
                case "matmul", "fused_gemm_epilogue" -> op.in("Y");
                case "lookup_table" -> op.in("W");
                case "conv2d", "depthwise_conv2d", "conv2d_transpose" -> op.in("Filter");
                case "batch_norm", "layer_norm", "group_norm" -> op.in("Scale");
                default -> null;
            };
            String module = modules != null ? next : weight == null ? null : layerOf(weight);
            switch (op.type()) {
                case "matmul" -> {
                    // fc's weight [in, out] is PyTorch's transposed; one multiplied with transpose_Y is its layout
                    String w = op.in("Y");
                    if (isParameter(w) && b.var(w).shape().length == 2 && !op.<Boolean>attr("transpose_X")) {
                        found.add("fc " + w);
                        pair(module, "weight", w);
                        if (!op.<Boolean>attr("transpose_Y")) {
                            linearWeights.add(w);
                        }
                        biasOfLayerOut.put(op.out("Out"), module);
                    }
                }
                case "fused_gemm_epilogue" -> {
                    String w = op.in("Y");
                    if (isParameter(w)) {
                        found.add("fc " + w);
                        pair(module, "weight", w);
                        if (!op.<Boolean>attr("trans_y")) {
                            linearWeights.add(w);
                        }
                        if (isParameter(op.in("Bias"))) {
                            pair(module, "bias", op.in("Bias"));
                        }
                    }
                }
                case "elementwise_add" -> {
                    String owner = biasOfLayerOut.get(op.in("X"));
                    if (owner != null && isParameter(op.in("Y"))) {
                        pair(owner, "bias", op.in("Y"));
                    }
                }
                case "conv2d", "depthwise_conv2d", "conv2d_transpose" -> {
                    if (isParameter(op.in("Filter"))) {
                        found.add(op.type() + " " + op.in("Filter"));
                        pair(module, "weight", op.in("Filter"));
                        biasOfLayerOut.put(op.out("Output"), module);
                    }
                }
                case "group_norm" -> {
                    found.add("group_norm " + op.in("Scale"));
                    pair(module, "weight", op.in("Scale"));
                    pair(module, "bias", op.in("Bias"));
                }
                case "lookup_table" -> {
                    found.add("embedding " + op.in("W"));
                    pair(module, "weight", op.in("W"));
                }
                case "batch_norm" -> {
                    found.add("batch_norm " + op.in("Scale"));
                    pair(module, "weight", op.in("Scale"));
                    pair(module, "bias", op.in("Bias"));
                    pair(module, "running_mean", op.in("Mean"));
                    pair(module, "running_var", op.in("Variance"));
                    if (module != null) {
                        batchNormModules.add(module);
                    }
                }
                case "layer_norm" -> {
                    if (isParameter(op.in("Scale"))) {
                        found.add("layer_norm " + op.in("Scale"));
                        pair(module, "weight", op.in("Scale"));
                        pair(module, "bias", op.in("Bias"));
                    }
                }
                default -> {
                }
            }
        }
        return found;
    }

    private boolean isParameter(String name) {
        return name != null && program.globalBlock().hasVar(name) && program.globalBlock().var(name).isParameter();
    }

    private void pair(String module, String torchSuffix, String fleetName) {
        if (module != null && fleetName != null && !toTorch.containsKey(fleetName)) {
            String torchName = module + "." + torchSuffix;
            toFleet.put(torchName, fleetName);
            toTorch.put(fleetName, torchName);
        }
    }

    /**
     * Loads the PyTorch state_dict {@code file} into the model's weights in {@code scope}, as {@link Parameters#load}
     * does (strictness, further renaming, dtype conversion, all or nothing); the batch-norm counts are dropped.
     */
    public LoadReport load(Path file, Scope scope, ParameterLoadOptions options) {
        return Parameters.loadInto(file, fromTorch(SafeTensors.read(file)), ModelState.of(program, scope), options);
    }

    /** As {@link #load(Path, Scope, ParameterLoadOptions)} for a program that {@code runner} runs. */
    public LoadReport load(Path file, Scope scope, ProgramRunner runner, ParameterLoadOptions options) {
        runner.syncToScope(scope);
        LoadReport report = load(file, scope, options);
        runner.scopeChanged();
        return report;
    }

    /**
     * Writes the model's weights from {@code scope} to {@code file} as a PyTorch state_dict ({@code
     * model.load_state_dict(safetensors.torch.load_file(file))}), with a zero {@code num_batches_tracked} per batch norm.
     */
    public void save(Path file, Scope scope) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        ModelState.of(program, scope).forEach((name, t) -> out.put(toTorch.getOrDefault(name, name),
                linearWeights.contains(name) ? transpose(t) : t));
        for (String module : batchNormModules) {
            out.put(module + "." + BATCHES_TRACKED, Tensor.zeros(DType.I64));
        }
        SafeTensors.write(file, out, Map.of("format", "pt"));
    }

    /** PyTorch's tensors under Fleet4J's names and layouts; names of no paired layer pass unchanged. */
    private Map<String, Tensor> fromTorch(Map<String, Tensor> torch) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        torch.forEach((name, t) -> {
            String fleet = toFleet.get(name);
            if (fleet == null) {
                if (!isBatchesTracked(name)) {
                    out.put(name, t);
                }
            } else {
                out.put(fleet, linearWeights.contains(fleet) && t.rank() == 2 ? transpose(t) : t);
            }
        });
        return out;
    }

    private boolean isBatchesTracked(String name) {
        int dot = name.lastIndexOf('.');
        return dot > 0 && name.substring(dot + 1).equals(BATCHES_TRACKED) && batchNormModules.contains(name.substring(0, dot));
    }

    /** {@code t} [r, c] as a new [c, r] tensor of the same dtype. */
    static Tensor transpose(Tensor t) {
        long rows = t.dim(0);
        long cols = t.dim(1);
        Tensor out = Tensor.zeros(t.dtype(), cols, rows);
        for (long r = 0; r < rows; r++) {
            for (long c = 0; c < cols; c++) {
                out.setDouble(c * rows + r, t.getDouble(r * cols + c));
            }
        }
        return out;
    }
}
