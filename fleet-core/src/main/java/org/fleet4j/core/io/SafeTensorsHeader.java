package org.fleet4j.core.io;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.text.Quoted;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON header of a safetensors file: for each tensor its dtype, shape and [begin, end) byte range within the
 * data section, plus optional string metadata under "__metadata__". Parsing checks everything a reader relies on.
 */
final class SafeTensorsHeader {
    static final String METADATA_KEY = "__metadata__";
    /** The reference implementation refuses headers above 100 MB; so do we, before allocating anything. */
    static final long MAX_HEADER_BYTES = 100_000_000;
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    /**
     * One tensor: {@code dtype} is what it is held as in memory, {@code stored} what the file holds (they differ for
     * F16 and U8, which are widened to F32 and I32 on reading).
     */
    record Entry(String name, DType dtype, StoredDType stored, long[] shape, long begin, long end) {
        Entry(String name, DType dtype, long[] shape, long begin, long end) {
            this(name, dtype, StoredDType.of(dtype), shape, begin, end);
        }

        long byteSize() {
            return end - begin;
        }
    }

    private final List<Entry> entries;
    private final Map<String, String> metadata;

    SafeTensorsHeader(List<Entry> entries, Map<String, String> metadata) {
        this.entries = List.copyOf(entries);
        this.metadata = metadata;
    }

    List<Entry> entries() {
        return entries;
    }

    Map<String, String> metadata() {
        return metadata;
    }

    static String code(DType dtype) {
        return StoredDType.of(dtype).name();
    }

    /** The header as UTF-8 JSON, padded with spaces to a multiple of 8 bytes so the data section is aligned. */
    byte[] encode() {
        ObjectNode root = JSON.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = root.putObject(METADATA_KEY);
            metadata.forEach(meta::put);
        }
        for (Entry e : entries) {
            ObjectNode t = root.putObject(e.name());
            t.put("dtype", code(e.dtype()));
            ArrayNode shape = t.putArray("shape");
            Arrays.stream(e.shape()).forEach(shape::add);
            t.putArray("data_offsets").add(e.begin()).add(e.end());
        }
        byte[] json = root.toString().getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) & ~7;
        byte[] out = Arrays.copyOf(json, padded);
        Arrays.fill(out, json.length, padded, (byte) ' ');
        return out;
    }

    /**
     * Parses and validates a header whose file has {@code dataBytes} bytes after it: known dtypes, shapes that match
     * their byte ranges, ranges inside the data section, contiguous from 0 with no holes or overlaps, covering it all.
     */
    static SafeTensorsHeader parse(Path file, byte[] json, long dataBytes) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JacksonException e) {
            throw new CheckpointException(file, null, "header is not valid JSON: " + Quoted.message(e.getOriginalMessage()), e);
        } catch (IOException e) {
            throw new CheckpointException(file, null, "header cannot be parsed: " + Quoted.message(e.getMessage()), e);
        }
        if (root == null || !root.isObject()) {
            throw new CheckpointException(file, null, "header is not a JSON object");
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<String, JsonNode> field : root.properties()) {
            String name = field.getKey();
            if (name.equals(METADATA_KEY)) {
                parseMetadata(file, field.getValue(), metadata);
            } else {
                entries.add(parseEntry(file, name, field.getValue(), dataBytes));
            }
        }
        checkContiguous(file, entries, dataBytes);
        return new SafeTensorsHeader(entries, metadata);
    }

    private static void parseMetadata(Path file, JsonNode node, Map<String, String> out) {
        if (!node.isObject()) {
            throw new CheckpointException(file, null, METADATA_KEY + " is not a JSON object of strings");
        }
        for (Map.Entry<String, JsonNode> kv : node.properties()) {
            if (!kv.getValue().isTextual()) {
                throw new CheckpointException(file, null, METADATA_KEY + " value of " + Quoted.of(kv.getKey()) + " is "
                        + Quoted.bare(kv.getValue().toString()) + ", not a string");
            }
            out.put(kv.getKey(), kv.getValue().textValue());
        }
    }

    private static Entry parseEntry(Path file, String name, JsonNode node, long dataBytes) {
        if (name.isEmpty()) {
            throw new CheckpointException(file, name, "a tensor has an empty name");
        }
        if (!node.isObject()) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " is described by " + Quoted.bare(node.toString()) + ", not a JSON object");
        }
        JsonNode dtypeNode = node.get("dtype");
        if (dtypeNode == null || !dtypeNode.isTextual()) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has no \"dtype\" string");
        }
        StoredDType stored = StoredDType.parse(dtypeNode.textValue());
        if (stored == null) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has dtype " + Quoted.bare(dtypeNode.textValue())
                    + "; Fleet4J reads " + StoredDType.names());
        }
        long[] shape = nonNegativeLongs(file, name, node, "shape", -1);
        long[] offsets = nonNegativeLongs(file, name, node, "data_offsets", 2);
        long begin = offsets[0];
        long end = offsets[1];
        if (begin > end) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has data_offsets [" + begin + ", " + end + "] that end before they begin");
        }
        if (end > dataBytes) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has data_offsets [" + begin + ", " + end
                    + "] past the end of the data section (" + dataBytes + " bytes); the file is probably truncated");
        }
        long need;
        try {
            need = Math.multiplyExact(Shapes.numel(shape), stored.byteSize());
        } catch (ArithmeticException e) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has shape " + Shapes.str(shape) + ", too many elements to hold");
        }
        if (need != end - begin) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " is " + stored + " " + Shapes.str(shape) + " (" + need
                    + " bytes) but its data_offsets [" + begin + ", " + end + "] span " + (end - begin) + " bytes");
        }
        return new Entry(name, stored.heldAs(), stored, shape, begin, end);
    }

    private static long[] nonNegativeLongs(Path file, String name, JsonNode node, String key, int expectedLength) {
        JsonNode array = node.get(key);
        String expected = expectedLength < 0 ? "an array of non-negative integers" : "an array of " + expectedLength + " non-negative integers";
        if (array == null || !array.isArray() || (expectedLength >= 0 && array.size() != expectedLength)) {
            throw new CheckpointException(file, name, Quoted.bare(name) + " has \"" + key + "\" " + Quoted.bare(String.valueOf(array)) + "; expected " + expected);
        }
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode v = array.get(i);
            if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
                throw new CheckpointException(file, name, Quoted.bare(name) + " has \"" + key + "\" " + Quoted.bare(String.valueOf(array)) + "; expected " + expected);
            }
            out[i] = v.longValue();
        }
        return out;
    }

    private static void checkContiguous(Path file, List<Entry> entries, long dataBytes) {
        List<Entry> byOffset = new ArrayList<>(entries);
        byOffset.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long next = 0;
        String previous = null;
        for (Entry e : byOffset) {
            if (e.begin() != next) {
                throw new CheckpointException(file, e.name(), Quoted.bare(e.name()) + " starts at byte " + e.begin() + " of the data section, but "
                        + (previous == null ? "the section starts at 0" : previous + " ends at " + next)
                        + "; tensors must follow each other without holes or overlaps");
            }
            next = e.end();
            previous = e.name();
        }
        if (next != dataBytes) {
            throw new CheckpointException(file, null, "the data section has " + dataBytes + " bytes but the header's tensors cover "
                    + next + "; the file has " + (dataBytes - next) + " bytes of trailing garbage");
        }
    }
}
