package org.fleet4j.strategy.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.strategy.schema.RawValue;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.text.Quoted;

/**
 * Reads YAML and JSON strategy files into raw entries with the line of every key, walking
 * Jackson's token stream (a tree would lose the lines).
 */
final class JacksonStrategyReader {
    private final JsonParser parser;
    private final String source;
    private final List<RawEntry> entries = new ArrayList<>();

    private JacksonStrategyReader(JsonParser parser, String source) {
        this.parser = parser;
        this.source = source;
    }

    static List<RawEntry> read(JsonFactory factory, String text, String source) {
        try (JsonParser parser = factory.createParser(text)) {
            JacksonStrategyReader reader = new JacksonStrategyReader(parser, source);
            reader.readDocument();
            return reader.entries;
        } catch (JsonProcessingException e) {
            throw syntaxError(source, e);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + source + " from memory", e);
        }
    }

    private void readDocument() throws IOException {
        JsonToken first = parser.nextToken();
        if (first == null || first == JsonToken.VALUE_NULL) {
            return;
        }
        if (first != JsonToken.START_OBJECT) {
            throw new StrategyException(source + ":" + line() + ": the file must hold a mapping of keys to values,"
                    + " but it holds " + (first == JsonToken.START_ARRAY ? "a list" : "the single value " + Quoted.bare(parser.getText())));
        }
        readObject("");
        if (parser.nextToken() != null) {
            throw new StrategyException(source + ":" + line() + ": unexpected content after the strategy's mapping"
                    + " (one strategy per file)");
        }
    }

    private void readObject(String prefix) throws IOException {
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String key = prefix.isEmpty() ? parser.currentName() : prefix + "." + parser.currentName();
            int line = line();
            JsonToken value = parser.nextToken();
            switch (value) {
                case START_OBJECT -> {
                    entries.add(new RawEntry(key, new RawValue.Block(), line, false));
                    readObject(key);
                }
                case START_ARRAY -> entries.add(new RawEntry(key, readList(key), line, false));
                default -> entries.add(new RawEntry(key, scalar(value), line, false));
            }
        }
    }

    private RawValue readList(String key) throws IOException {
        List<RawValue> items = new ArrayList<>();
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                throw new StrategyException(source + ":" + line() + ": " + Quoted.bare(key)
                        + ": a list here holds plain values (strings or numbers), not nested lists or mappings");
            }
            items.add(scalar(token));
        }
        return new RawValue.ListOf(List.copyOf(items));
    }

    private RawValue scalar(JsonToken token) throws IOException {
        return switch (token) {
            case VALUE_TRUE -> new RawValue.Bool(true);
            case VALUE_FALSE -> new RawValue.Bool(false);
            case VALUE_NUMBER_INT -> new RawValue.Number(parser.getText(), true);
            case VALUE_NUMBER_FLOAT -> new RawValue.Number(parser.getText(), false);
            case VALUE_NULL -> new RawValue.Nothing();
            default -> new RawValue.Text(parser.getText(), true);
        };
    }

    private int line() {
        return parser.currentTokenLocation().getLineNr();
    }

    private static StrategyException syntaxError(String source, JsonProcessingException e) {
        JsonLocation where = e.getLocation();
        String line = where != null && where.getLineNr() > 0 ? ":" + where.getLineNr() : "";
        String message = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        return new StrategyException(source + line + ": syntax error: "
                + Quoted.message(message.lines().findFirst().orElse("").strip()));
    }
}
