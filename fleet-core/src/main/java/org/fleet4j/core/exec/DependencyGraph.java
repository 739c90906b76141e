package org.fleet4j.core.exec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;

/**
 * Which ops of a plan must finish before which, so that running them by readiness on several threads gives the
 * results of program order:
 * <ul>
 * <li>data: an op waits for the last earlier writer of every storage class it reads or writes (RAW, WAW) and for
 * the earlier readers of a class since its last write before it writes the class (WAR); classes are the vars'
 * shared memory ({@link StorageClasses});</li>
 * <li>collectives (op types starting with {@code c_}) run in program order, because every rank must issue the same
 * collectives in the same order;</li>
 * <li>{@code conditional_begin} and {@code conditional_end} are barriers: each waits for every op before it and
 * every op after it waits for it, so a region's ops never start before its condition is known;</li>
 * <li>with {@code backwardOptimizerOpDeps}, every parameter update (an op that writes a parameter) waits for every
 * op in front of the first update.</li>
 * </ul>
 */
final class DependencyGraph {
    /** Op types whose kernels talk to other ranks start with this (Paddle's convention: c_allreduce, c_broadcast). */
    static final String COLLECTIVE_PREFIX = "c_";

    /** successors[i]: the ops that wait for op i. */
    final int[][] successors;
    /** predecessors[i]: how many ops op i waits for. */
    final int[] predecessors;
    /** The storage classes the graph was built from. */
    final int[] classOf;

    DependencyGraph(Plan plan, int[] classOf, boolean backwardOptimizerOpDeps) {
        this.classOf = classOf;
        Plan.Step[] steps = plan.steps;
        int n = steps.length;
        BitSet[] before = new BitSet[n];
        int[] lastWriter = new int[classOf.length];
        Arrays.fill(lastWriter, -1);
        List<List<Integer>> readers = new ArrayList<>(classOf.length);
        for (int c = 0; c < classOf.length; c++) {
            readers.add(null);
        }
        int lastCollective = -1;
        int lastBarrier = -1;
        for (int i = 0; i < n; i++) {
            BitSet deps = new BitSet(n);
            before[i] = deps;
            Plan.Step step = steps[i];
            for (int slot : step.reads()) {
                addIfAny(deps, lastWriter[classOf[slot]]);
            }
            for (int slot : step.writes()) {
                int c = classOf[slot];
                addIfAny(deps, lastWriter[c]);
                if (readers.get(c) != null) {
                    readers.get(c).forEach(deps::set);
                }
            }
            for (int slot : step.reads()) {
                int c = classOf[slot];
                if (readers.get(c) == null) {
                    readers.set(c, new ArrayList<>());
                }
                readers.get(c).add(i);
            }
            for (int slot : step.writes()) {
                int c = classOf[slot];
                lastWriter[c] = i;
                if (readers.get(c) != null) {
                    readers.get(c).clear();
                }
            }
            String type = step.op().type();
            if (type.startsWith(COLLECTIVE_PREFIX)) {
                addIfAny(deps, lastCollective);
                lastCollective = i;
            }
            if (type.equals(Plan.CONDITIONAL_BEGIN) || type.equals(Plan.CONDITIONAL_END)) {
                deps.set(Math.max(0, lastBarrier), i);
                lastBarrier = i;
            } else {
                addIfAny(deps, lastBarrier);
            }
        }
        if (backwardOptimizerOpDeps) {
            orderUpdatesAfterBackward(plan, before);
        }
        predecessors = new int[n];
        int[] outDegree = new int[n];
        for (int i = 0; i < n; i++) {
            predecessors[i] = before[i].cardinality();
            before[i].stream().forEach(j -> outDegree[j]++);
        }
        successors = new int[n][];
        for (int j = 0; j < n; j++) {
            successors[j] = new int[outDegree[j]];
        }
        int[] filled = new int[n];
        for (int i = 0; i < n; i++) {
            int target = i;
            before[i].stream().forEach(j -> successors[j][filled[j]++] = target);
        }
    }

    /** Whether every sharing in {@code classes} is one of this graph's classes too, so the graph still holds. */
    boolean covers(int[] classes) {
        for (int s = 0; s < classes.length; s++) {
            if (classOf[classes[s]] != classOf[s]) {
                return false;
            }
        }
        return true;
    }

    private static void addIfAny(BitSet deps, int op) {
        if (op >= 0) {
            deps.set(op);
        }
    }

    /**
     * Every update waits for the ops in front of the first update that nothing in front of it waits for (which,
     * through their own dependencies, stand for all of them).
     */
    private static void orderUpdatesAfterBackward(Plan plan, BitSet[] before) {
        Block block = plan.program.globalBlock();
        int first = -1;
        for (int i = 0; i < plan.steps.length && first < 0; i++) {
            if (updatesParameter(block, plan.steps[i].op())) {
                first = i;
            }
        }
        if (first <= 0) {
            return;
        }
        BitSet awaited = new BitSet(first);
        for (int i = 0; i < first; i++) {
            awaited.or(before[i]);
        }
        BitSet frontier = new BitSet(first);
        frontier.set(0, first);
        frontier.andNot(awaited);
        for (int i = first; i < plan.steps.length; i++) {
            if (updatesParameter(block, plan.steps[i].op())) {
                before[i].or(frontier);
            }
        }
    }

    private static boolean updatesParameter(Block block, Op op) {
        for (String out : op.allOutputs()) {
            var v = block.findVar(out);
            if (v != null && v.isParameter()) {
                return true;
            }
        }
        return false;
    }
}
