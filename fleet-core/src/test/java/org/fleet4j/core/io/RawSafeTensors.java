package org.fleet4j.core.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** Writes safetensors files byte by byte, with dtypes Fleet4J does not write (F16, U8), as other libraries do. */
final class RawSafeTensors {
    private final List<String> header = new ArrayList<>();
    private final ByteBuffer data = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);

    /** Adds a tensor whose bytes {@code fill} puts (little-endian). */
    RawSafeTensors add(String name, String code, long[] shape, Consumer<ByteBuffer> fill) {
        int begin = data.position();
        fill.accept(data);
        header.add("\"" + name + "\":{\"dtype\":\"" + code + "\",\"shape\":" + Arrays.toString(shape).replace(" ", "")
                + ",\"data_offsets\":[" + begin + "," + data.position() + "]}");
        return this;
    }

    RawSafeTensors f16(String name, long[] shape, float... values) {
        return add(name, "F16", shape, b -> {
            for (float v : values) {
                b.putShort(Float.floatToFloat16(v));
            }
        });
    }

    RawSafeTensors f64(String name, long[] shape, double... values) {
        return add(name, "F64", shape, b -> Arrays.stream(values).forEach(b::putDouble));
    }

    RawSafeTensors f32(String name, long[] shape, float... values) {
        return add(name, "F32", shape, b -> {
            for (float v : values) {
                b.putFloat(v);
            }
        });
    }

    Path write(Path file) throws IOException {
        byte[] json = header.stream().collect(Collectors.joining(",", "{", "}")).getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate(8 + json.length + data.position()).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(json.length).put(json).put(Arrays.copyOf(data.array(), data.position()));
        Files.write(file, out.array());
        return file;
    }
}
