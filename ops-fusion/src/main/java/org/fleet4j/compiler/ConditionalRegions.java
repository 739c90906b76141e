package org.fleet4j.compiler;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.ControlOps;

/**
 * The {@code conditional_begin}/{@code conditional_end} regions around every op of a block: for op i, the indices of
 * the begins that enclose it, outermost first. An op runs on every step where a reader of its output runs exactly
 * when its regions are a prefix of the reader's.
 */
final class ConditionalRegions {
    private final List<List<Integer>> enclosing;

    private ConditionalRegions(List<List<Integer>> enclosing) {
        this.enclosing = enclosing;
    }

    static ConditionalRegions of(List<Op> ops) {
        List<List<Integer>> enclosing = new ArrayList<>();
        Deque<Integer> open = new ArrayDeque<>();
        for (int i = 0; i < ops.size(); i++) {
            String type = ops.get(i).type();
            if (type.equals(ControlOps.END)) {
                if (open.isEmpty()) {
                    throw new IrException("op #" + i + " " + ControlOps.END + " closes no " + ControlOps.BEGIN);
                }
                open.removeLast();
            }
            enclosing.add(List.copyOf(open));
            if (type.equals(ControlOps.BEGIN)) {
                open.addLast(i);
            }
        }
        if (!open.isEmpty()) {
            throw new IrException("op #" + open.peekLast() + " " + ControlOps.BEGIN + " has no " + ControlOps.END);
        }
        return new ConditionalRegions(enclosing);
    }

    /** The begins around op {@code i}, outermost first. */
    List<Integer> around(int i) {
        return enclosing.get(i);
    }

    /** Whether op {@code writer} runs on every step that op {@code reader} runs. */
    boolean runsWhenever(int writer, int reader) {
        List<Integer> w = enclosing.get(writer);
        List<Integer> r = enclosing.get(reader);
        return w.size() <= r.size() && r.subList(0, w.size()).equals(w);
    }

    /**
     * Where an op can go so that it runs whenever op {@code reader} does and before op {@code writer}: just before the
     * outermost region around the writer that does not also enclose the reader (or before the writer itself).
     */
    int beforeRegionOf(int writer, int reader) {
        List<Integer> w = enclosing.get(writer);
        List<Integer> r = enclosing.get(reader);
        for (int d = 0; d < w.size(); d++) {
            if (d >= r.size() || !w.get(d).equals(r.get(d))) {
                return w.get(d);
            }
        }
        return writer;
    }
}
