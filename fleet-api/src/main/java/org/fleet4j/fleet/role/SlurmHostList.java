package org.fleet4j.fleet.role;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.fleet4j.text.Quoted;

/**
 * Slurm's compact lists, expanded as {@code scontrol show hostnames} and Slurm's own tools do: host lists such as
 * {@code n[01-03,07]} (n01 n02 n03 n07: a range keeps the zero padding of its first number), {@code a[1-2],b3} and
 * {@code r[1-2]-n[1-2]} (every combination, left to right), and task counts such as {@code 2(x3),1} (2 2 2 1).
 */
final class SlurmHostList {
    private static final Pattern TASKS = Pattern.compile("(\\d+)(?:\\(x(\\d+)\\))?");

    private SlurmHostList() {
    }

    /** The hosts of a SLURM_JOB_NODELIST value, in Slurm's order. */
    static List<String> hosts(String list, String variable) {
        List<String> out = new ArrayList<>();
        for (String item : topLevel(list, variable)) {
            expand("", item, out, list, variable);
        }
        return out;
    }

    /** The tasks of each node from a SLURM_TASKS_PER_NODE value. */
    static List<Integer> tasksPerNode(String value, String variable) {
        List<Integer> out = new ArrayList<>();
        for (String item : value.split(",", -1)) {
            String t = item.strip();
            Matcher m = TASKS.matcher(t);
            if (!m.matches() || Integer.parseInt(m.group(1)) < 1) {
                throw new IllegalArgumentException("Slurm: " + variable + "=" + Quoted.of(value) + ": " + Quoted.of(t)
                        + " is not a task count such as 2 or 2(x3)");
            }
            int repeat = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
            for (int i = 0; i < repeat; i++) {
                out.add(Integer.parseInt(m.group(1)));
            }
        }
        return out;
    }

    /** Splits at the commas outside brackets. */
    private static List<String> topLevel(String list, String variable) {
        List<String> items = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < list.length(); i++) {
            char c = list.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
            }
            if (depth < 0 || depth > 1) {
                throw bad(list, variable, "unbalanced brackets");
            }
            if (c == ',' && depth == 0) {
                items.add(list.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw bad(list, variable, "unbalanced brackets");
        }
        items.add(list.substring(start));
        for (String item : items) {
            if (item.isBlank()) {
                throw bad(list, variable, "an empty host name");
            }
        }
        return items;
    }

    /** Appends every host that {@code prefix + rest} stands for. */
    private static void expand(String prefix, String rest, List<String> out, String list, String variable) {
        int open = rest.indexOf('[');
        if (open < 0) {
            out.add(prefix + rest);
            return;
        }
        int close = rest.indexOf(']', open);
        String head = prefix + rest.substring(0, open);
        String tail = rest.substring(close + 1);
        for (String range : rest.substring(open + 1, close).split(",", -1)) {
            String[] ends = range.strip().split("-", -1);
            if (ends.length > 2 || !ends[0].matches("\\d+") || ends.length == 2 && !ends[1].matches("\\d+")) {
                throw bad(list, variable, Quoted.of(range) + " is not a number or a range such as 01-03");
            }
            long from = Long.parseLong(ends[0]);
            long to = ends.length == 2 ? Long.parseLong(ends[1]) : from;
            if (to < from || to - from > 100_000) {
                throw bad(list, variable, "range " + Quoted.of(range) + " runs backwards or is too long");
            }
            for (long n = from; n <= to; n++) {
                String number = Long.toString(n);
                String padded = "0".repeat(Math.max(0, ends[0].length() - number.length())) + number;
                expand(head + padded, tail, out, list, variable);
            }
        }
    }

    private static IllegalArgumentException bad(String list, String variable, String why) {
        return new IllegalArgumentException("Slurm: " + variable + "=" + Quoted.of(list) + " is not a host list such as"
                + " n[01-03,07]: " + why);
    }
}
