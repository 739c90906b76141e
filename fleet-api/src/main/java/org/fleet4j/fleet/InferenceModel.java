package org.fleet4j.fleet;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.ProgramJson;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.OnnxExporter;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.fleet4j.text.Quoted;

/**
 * A forward-only program ready to serve: pruned to the ops its fetches need, with the values of its parameters. On
 * disk it is a folder holding {@value #PROGRAM_FILE} ({@link ProgramJson}) and {@value #PARAMS_FILE} (safetensors,
 * whose metadata names the feeds and fetches). It can also be written as an ONNX model ({@link Format#ONNX}).
 */
public record InferenceModel(Program program, Scope scope, List<String> feeds, List<String> fetches) {
    public static final String PROGRAM_FILE = "program.json";
    public static final String PARAMS_FILE = "params.safetensors";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** How {@link #save} and {@link Fleet#saveInferenceModel} write a model. */
    public enum Format {
        /** A folder with program.json and params.safetensors, which {@link #load} reads back. */
        FLEET4J,
        /** One ONNX file (opset {@value OnnxExporter#OPSET}) for ONNX Runtime and other ONNX consumers. */
        ONNX
    }

    public InferenceModel {
        feeds = List.copyOf(feeds);
        fetches = List.copyOf(fetches);
    }

    /**
     * Writes this model to {@code path}: a folder (created if needed) for {@link Format#FLEET4J}, a file for
     * {@link Format#ONNX}. An op with no ONNX form fails the ONNX export, naming the op, before any file is written.
     */
    public void save(Path path, Format format) {
        switch (format) {
            case FLEET4J -> {
                try {
                    Files.createDirectories(path);
                } catch (IOException e) {
                    throw new UncheckedIOException("inference model folder " + path + " cannot be made: " + e, e);
                }
                write(path);
            }
            case ONNX -> OnnxExporter.write(toOnnx(), path);
        }
    }

    /** This model as ONNX; fails naming the first op that has no ONNX form. */
    public ModelProto toOnnx() {
        return OnnxExporter.export(program, scope, feeds, fetches);
    }

    /** Runs the program on one batch: {@code feed} maps each feed name to its tensor; returns the fetches by name. */
    public Map<String, Tensor> run(Executor executor, Map<String, Tensor> feed) {
        if (!feed.keySet().equals(new HashSet<>(feeds))) {
            throw new IllegalArgumentException("the inference model is fed " + feeds + ", got " + feed.keySet());
        }
        return executor.run(program, scope, feed, fetches);
    }

    /**
     * A copy of {@code program} with only the ops that compute {@code fetches} from {@code feeds} and the persistable
     * vars, and only the vars those ops use. Fails naming a var the fetches need that is neither fed nor persistable.
     */
    static Program prune(Program program, List<String> feeds, List<String> fetches) {
        if (fetches.isEmpty()) {
            throw new IllegalArgumentException("an inference model needs at least one fetch var");
        }
        Program p = program.copy();
        Block b = p.globalBlock();
        for (String f : feeds) {
            if (!b.var(f).isData()) {
                throw new IllegalArgumentException("feed '" + f + "' is not a data var of the program");
            }
        }
        fetches.forEach(b::var);
        Set<String> needed = new HashSet<>(fetches);
        List<Op> ops = b.ops();
        for (int i = ops.size() - 1; i >= 0; i--) {
            Op op = ops.get(i);
            if (op.allOutputs().stream().anyMatch(needed::contains)) {
                op.allInputs().stream().filter(n -> !feeds.contains(n)).forEach(needed::add);
            } else {
                b.removeOp(i);
            }
        }
        Set<String> used = new LinkedHashSet<>(feeds);
        used.addAll(fetches);
        Set<String> written = new HashSet<>();
        for (Op op : b.ops()) {
            for (String in : op.allInputs()) {
                Var v = b.var(in);
                if (!written.contains(in) && !feeds.contains(in) && !(v.persistable() && !v.isData())) {
                    throw new IllegalArgumentException("fetches " + fetches + " need var '" + in + "' (input of op "
                            + op.type() + "), which is neither fed (feeds: " + feeds + ") nor a persistable var");
                }
            }
            used.addAll(op.allInputs());
            used.addAll(op.allOutputs());
            written.addAll(op.allOutputs());
        }
        for (Var v : new ArrayList<>(b.vars())) {
            if (!used.contains(v.name())) {
                b.removeVar(v.name());
            }
        }
        return p;
    }

    /** Writes {@code dir}/program.json and {@code dir}/params.safetensors (the directory must exist). */
    void write(Path dir) {
        Path programFile = dir.resolve(PROGRAM_FILE);
        try {
            ProgramJson.save(program, programFile);
            SafeTensors.write(dir.resolve(PARAMS_FILE), Persistables.of(program, scope, "saveInferenceModel"),
                    Map.of("format", "fleet4j-inference-model", "feeds", JSON.writeValueAsString(feeds),
                            "fetches", JSON.writeValueAsString(fetches)));
        } catch (IOException e) {
            throw new UncheckedIOException("inference model " + programFile + " cannot be written: " + e.getMessage(), e);
        }
    }

    /** Reads a model that {@link Fleet#saveInferenceModel} wrote; fails naming the file that is missing or wrong. */
    public static InferenceModel load(Path dir) {
        Path programFile = dir.resolve(PROGRAM_FILE);
        Path paramsFile = dir.resolve(PARAMS_FILE);
        Program program;
        try {
            program = ProgramJson.load(programFile);
        } catch (IOException e) {
            throw new UncheckedIOException("inference model " + programFile + " cannot be read: " + e, e);
        } catch (IrException e) {
            throw new IllegalArgumentException("inference model " + programFile + ": " + e.getMessage(), e);
        }
        Checkpoint params = SafeTensors.readCheckpoint(paramsFile);
        Scope scope = new Scope();
        for (Var v : program.globalBlock().vars()) {
            if (v.persistable() && !v.isData()) {
                Tensor t = params.tensors().get(v.name());
                if (t == null) {
                    throw new CheckpointException(paramsFile, v.name(), v.name() + " is missing; " + programFile
                            + " needs it");
                }
                scope.put(v.name(), t);
            }
        }
        return new InferenceModel(program, scope, names(params, "feeds", paramsFile), names(params, "fetches", paramsFile));
    }

    private static List<String> names(Checkpoint params, String key, Path file) {
        String value = params.metadata().get(key);
        if (value == null) {
            throw new CheckpointException(file, null, "metadata has no " + Quoted.of(key) + "; not an inference model's parameters");
        }
        try {
            return JSON.readValue(value, new TypeReference<List<String>>() { });
        } catch (JsonProcessingException e) {
            throw new CheckpointException(file, null, "metadata " + Quoted.of(key) + " is not a JSON list of names: " + Quoted.of(value), e);
        }
    }
}
