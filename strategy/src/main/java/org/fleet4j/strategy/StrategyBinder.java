package org.fleet4j.strategy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.fleet4j.strategy.files.RawEntry;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.FieldGroup;
import org.fleet4j.strategy.schema.InvalidValueException;
import org.fleet4j.strategy.schema.Origin;
import org.fleet4j.strategy.schema.RawValue;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.fleet4j.text.Quoted;

/**
 * Turns the raw entries of a file into a strategy through the schema: resolves aliases, rejects
 * unknown and repeated keys, converts and range-checks values. It reports every problem of the
 * file at once, ordered by line, rather than only the first.
 */
final class StrategyBinder {
    private record Problem(int line, String message) {
    }

    private final String source;
    private final List<Problem> problems = new ArrayList<>();

    private StrategyBinder(String source) {
        this.source = source;
    }

    static DistributedStrategy bind(List<RawEntry> entries, String source) {
        return new StrategyBinder(source).bind(entries);
    }

    private DistributedStrategy bind(List<RawEntry> entries) {
        Map<Field<?>, List<RawEntry>> byField = new LinkedHashMap<>();
        Set<String> rejectedBlocks = new HashSet<>();
        for (RawEntry entry : entries) {
            if (insideAny(entry.key(), rejectedBlocks)) {
                continue;
            }
            boolean block = entry.value() instanceof RawValue.Block;
            Optional<FieldGroup> group = StrategySchema.findGroup(entry.key());
            Optional<Field<?>> field = StrategySchema.find(entry.key());
            if (group.isPresent()) {
                if (!block && !(entry.value() instanceof RawValue.Nothing)) {
                    problem(entry.line(), entry.key() + " is a group of settings ("
                            + StrategySchema.fieldsOf(group.get()).stream().map(Field::name).limit(3).collect(Collectors.joining(", "))
                            + ", ...), not a single value; got " + entry.value().shown());
                }
            } else if (field.isPresent() && block) {
                problem(entry.line(), entry.key() + " takes a single value (" + field.get().allowed() + "), not a block");
                rejectedBlocks.add(entry.key());
            } else if (field.isPresent() && entry.value() instanceof RawValue.Nothing) {
                problem(entry.line(), entry.key() + ": no value given; expected " + field.get().allowed());
            } else if (field.isPresent()) {
                byField.computeIfAbsent(field.get(), f -> new ArrayList<>()).add(entry);
            } else {
                problem(entry.line(), "unknown key " + Quoted.of(entry.key()) + "; " + StrategySchema.unknownKeyHint(entry.key()));
                if (block) {
                    rejectedBlocks.add(entry.key());
                }
            }
        }
        DistributedStrategy strategy = new DistributedStrategy();
        byField.forEach((field, given) -> store(strategy, field, given));
        if (!problems.isEmpty()) {
            throw new StrategyException(problems.stream().sorted(Comparator.comparingInt(Problem::line))
                    .map(p -> Origin.file(source, p.line()).prefix() + p.message()).toList());
        }
        return strategy;
    }

    private void store(DistributedStrategy strategy, Field<?> field, List<RawEntry> given) {
        RawEntry first = given.getFirst();
        boolean extendsList = field.kind().isList() && given.stream().allMatch(RawEntry::repeatable);
        if (given.size() > 1 && !extendsList) {
            problem(given.get(1).line(), field.key() + " is set more than once ("
                    + given.stream().map(e -> e.key() + " at line " + e.line()).collect(Collectors.joining(", "))
                    + "); keep one");
            return;
        }
        RawValue value = extendsList ? concatenated(given) : first.value();
        try {
            strategy.put(field, field.fromRaw(value), Origin.file(source, first.line()));
        } catch (InvalidValueException e) {
            String written = first.key().equals(field.key()) ? field.key() : first.key() + " (" + field.key() + ")";
            problem(first.line(), written + ": " + e.getMessage());
        }
    }

    /** Prototxt repeats a key once per list item; a single item or a [..] list may also appear. */
    private static RawValue concatenated(List<RawEntry> given) {
        List<RawValue> items = new ArrayList<>();
        for (RawEntry entry : given) {
            if (entry.value() instanceof RawValue.ListOf list) {
                items.addAll(list.items());
            } else {
                items.add(entry.value());
            }
        }
        return new RawValue.ListOf(List.copyOf(items));
    }

    private static boolean insideAny(String key, Set<String> blocks) {
        return blocks.stream().anyMatch(b -> key.startsWith(b + "."));
    }

    private void problem(int line, String message) {
        problems.add(new Problem(line, message));
    }
}
