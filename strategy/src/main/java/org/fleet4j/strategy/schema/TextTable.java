package org.fleet4j.strategy.schema;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table with a header row and left-aligned columns, for terminals and logs. */
public final class TextTable {
    private final List<String[]> rows = new ArrayList<>();

    public TextTable(String... header) {
        rows.add(header);
    }

    public TextTable row(String... cells) {
        if (cells.length != rows.getFirst().length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, header has " + rows.getFirst().length);
        }
        rows.add(cells);
        return this;
    }

    public String render() {
        int columns = rows.getFirst().length;
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], row[c].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                line.append(c == columns - 1 ? row[c] : pad(row[c], widths[c] + 2));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String pad(String text, int width) {
        return text + " ".repeat(width - text.length());
    }
}
