package org.fleet4j.strategy.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.Setting;
import org.fleet4j.strategy.schema.StrategyException;

/** The file formats a strategy is read from and written to, chosen by the file's extension. */
public enum StrategyFormat {
    YAML(List.of(".yaml", ".yml")),
    JSON(List.of(".json")),
    /** Protobuf text format, as Paddle's {@code strategy.save_to_prototxt} writes it. */
    PROTOTXT(List.of(".prototxt", ".pbtxt"));

    private final List<String> extensions;

    StrategyFormat(List<String> extensions) {
        this.extensions = extensions;
    }

    public List<String> extensions() {
        return extensions;
    }

    /** The format of this file, from its extension. */
    public static StrategyFormat of(Path file) {
        String name = String.valueOf(file.getFileName()).toLowerCase(Locale.ROOT);
        for (StrategyFormat format : values()) {
            if (format.extensions.stream().anyMatch(name::endsWith)) {
                return format;
            }
        }
        throw new StrategyException(file + ": cannot tell the format from the file name;"
                + " name it .yaml, .yml, .json, .prototxt or .pbtxt");
    }

    public List<RawEntry> read(String text, String source) {
        return switch (this) {
            case YAML -> JacksonStrategyReader.read(new YAMLFactory(), text, source);
            case JSON -> JacksonStrategyReader.read(new JsonFactory(), text, source);
            case PROTOTXT -> PrototxtReader.read(text, source);
        };
    }

    /** The text of a strategy file holding these set fields (a strategy's {@code settings()}). */
    public String write(Map<Field<?>, Setting> settings) {
        return switch (this) {
            case YAML, JSON -> JacksonStrategyWriter.write(this, settings);
            case PROTOTXT -> PrototxtWriter.write(settings);
        };
    }
}
