package org.fleet4j.core.ir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.tensor.DType;

/** Programs to and from JSON. Attribute values carry their type, so a loaded program equals the saved one. */
public final class ProgramJson {
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int FORMAT_VERSION = 1;

    private ProgramJson() {
    }

    public static String toJson(Program p) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", "fleet4j-program");
        root.put("version", FORMAT_VERSION);
        root.put("random_seed", p.randomSeed());
        ObjectNode counters = root.putObject("name_counters");
        p.nameCounters().forEach(counters::put);
        ArrayNode vars = root.putArray("vars");
        for (Var v : p.globalBlock().vars()) {
            ObjectNode n = vars.addObject();
            n.put("name", v.name());
            n.put("dtype", v.dtype().displayName());
            ArrayNode shape = n.putArray("shape");
            for (long d : v.shape()) {
                shape.add(d);
            }
            n.put("kind", v.kind().name().toLowerCase());
            n.put("persistable", v.persistable());
            n.put("parameter", v.isParameter());
            n.put("stop_gradient", v.stopGradient());
            n.put("data", v.isData());
            if (v.regularizer() != null) {
                ObjectNode r = n.putObject("regularizer");
                r.put("kind", v.regularizer().kind().name());
                r.put("coeff", v.regularizer().coeff());
            }
        }
        ArrayNode ops = root.putArray("ops");
        for (Op op : p.globalBlock().ops()) {
            ObjectNode n = ops.addObject();
            n.put("type", op.type());
            n.set("inputs", MAPPER.valueToTree(op.inputs()));
            n.set("outputs", MAPPER.valueToTree(op.outputs()));
            ObjectNode attrs = n.putObject("attrs");
            op.attrs().forEach((k, v) -> {
                ObjectNode a = attrs.putObject(k);
                a.put("type", typeOf(v).name().toLowerCase());
                a.set("value", MAPPER.valueToTree(v));
            });
        }
        try {
            return MAPPER.writeValueAsString(root);
        } catch (IOException e) {
            throw new IrException("cannot serialise program", e);
        }
    }

    static AttrType typeOf(Object v) {
        return switch (v) {
            case Integer i -> AttrType.INT;
            case Long l -> AttrType.LONG;
            case Float f -> AttrType.FLOAT;
            case Boolean b -> AttrType.BOOL;
            case String s -> AttrType.STRING;
            case int[] a -> AttrType.INTS;
            case long[] a -> AttrType.LONGS;
            case float[] a -> AttrType.FLOATS;
            case String[] a -> AttrType.STRINGS;
            default -> throw new IrException("attribute value of unsupported type " + v.getClass().getName());
        };
    }

    /** Parses a program; ops are re-checked against their specs. {@code source} names the input in errors. */
    public static Program fromJson(String json, String source) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (IOException e) {
            throw new IrException(source + ": not valid JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (root == null || !"fleet4j-program".equals(root.path("format").asText())) {
            throw new IrException(source + ": not a Fleet4J program (missing \"format\": \"fleet4j-program\")");
        }
        if (root.path("version").asInt() != FORMAT_VERSION) {
            throw new IrException(source + ": program format version " + root.path("version")
                    + " is not supported (expected " + FORMAT_VERSION + ")");
        }
        Program p = new Program();
        p.setRandomSeed(root.path("random_seed").asLong());
        root.path("name_counters").properties().forEach(e -> p.nameCounters().put(e.getKey(), e.getValue().asInt()));
        for (JsonNode n : root.path("vars")) {
            long[] shape = new long[n.path("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = n.path("shape").get(i).asLong();
            }
            Var v = new Var(p.globalBlock(), n.path("name").asText(), DType.parse(n.path("dtype").asText()), shape);
            v.setKind(VarKind.valueOf(n.path("kind").asText("dense").toUpperCase()));
            v.setPersistable(n.path("persistable").asBoolean());
            v.setParameter(n.path("parameter").asBoolean());
            v.setStopGradient(n.path("stop_gradient").asBoolean());
            v.setData(n.path("data").asBoolean());
            if (n.has("regularizer")) {
                JsonNode r = n.path("regularizer");
                try {
                    v.setRegularizer(new Regularizer(Regularizer.Kind.valueOf(r.path("kind").asText()),
                            (float) r.path("coeff").asDouble()));
                } catch (IllegalArgumentException e) {
                    throw new IrException(source + ": var " + v.name() + ": bad regularizer " + r + " (kind L1 or L2,"
                            + " coeff a finite number >= 0)");
                }
            }
            p.globalBlock().addRaw(v);
        }
        int index = 0;
        for (JsonNode n : root.path("ops")) {
            String type = n.path("type").asText();
            Map<String, Object> attrs = new LinkedHashMap<>();
            for (var e : n.path("attrs").properties()) {
                AttrType t = AttrType.valueOf(e.getValue().path("type").asText().toUpperCase());
                attrs.put(e.getKey(), t.coerce(MAPPER.convertValue(e.getValue().path("value"), Object.class)));
            }
            Op op = new Op(type, slots(n.path("inputs")), slots(n.path("outputs")), attrs);
            try {
                p.globalBlock().addRaw(OpChecker.installed().check(op, p.globalBlock(), index));
            } catch (IrException e) {
                throw new IrException(source + ": op #" + index + ": " + e.getMessage(), e);
            }
            index++;
        }
        return p;
    }

    private static Map<String, List<String>> slots(JsonNode n) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (var e : n.properties()) {
            List<String> names = new ArrayList<>();
            e.getValue().forEach(x -> names.add(x.asText()));
            m.put(e.getKey(), names);
        }
        return m;
    }

    public static void save(Program p, Path file) throws IOException {
        Files.writeString(file, toJson(p));
    }

    public static Program load(Path file) throws IOException {
        return fromJson(Files.readString(file), file.toString());
    }
}
