package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * What each op of a plan waits for in the parallel executor. The rules for collectives and conditional regions need
 * their ops, which fleet-api and ops-fusion register: ops-fusion's ParallelExecutionTest covers them.
 */
class DependencyGraphTest {
    private static void op(Block b, String type, String in, String out, Map<String, Object> attrs) {
        b.appendOp(type, Map.of("X", List.of(in)), Map.of("Out", List.of(out)), attrs);
    }

    private static void scale(Block b, String in, String out) {
        op(b, "scale", in, out, Map.of("scale", 2f));
    }

    /** The ops op #i waits for, directly. */
    private static List<Integer> waitsFor(DependencyGraph g, int i) {
        List<Integer> before = new ArrayList<>();
        for (int j = 0; j < g.successors.length; j++) {
            for (int s : g.successors[j]) {
                if (s == i) {
                    before.add(j);
                }
            }
        }
        return before;
    }

    /** A plan whose kernels ran once in program order on these values, as the executor's first run leaves it. */
    private static Plan ranOnce(Program p, Map<String, Tensor> values) {
        Plan plan = new Plan(p, ExecContext.none());
        values.forEach((k, v) -> plan.frame[plan.slotOf.get(k)] = v);
        for (Plan.Step s : plan.steps) {
            s.kernel().run(s.args());
        }
        return plan;
    }

    private static DependencyGraph graphAfterOneRun(Program p, Map<String, Tensor> feed, boolean updateDeps) {
        Plan plan = ranOnce(p, feed);
        return new DependencyGraph(plan, StorageClasses.of(plan.frame), updateDeps);
    }

    @Test
    void readAfterWriteWriteAfterReadAndWriteAfterWrite() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, 4).setData(true);
        for (String v : List.of("a", "c")) {
            b.createVar(v, DType.F32, 4);
        }
        scale(b, "x", "a");   // #0 writes a
        scale(b, "a", "c");   // #1 reads a (RAW on #0)
        scale(b, "x", "a");   // #2 writes a again (WAR on #1, WAW on #0)
        scale(b, "x", "c");   // #3 independent of a, WAW on #1
        DependencyGraph g = graphAfterOneRun(p, Map.of("x", Tensor.zeros(4)), true);
        assertEquals(List.of(), waitsFor(g, 0));
        assertEquals(List.of(0), waitsFor(g, 1));
        assertEquals(List.of(0, 1), waitsFor(g, 2));
        assertEquals(List.of(1), waitsFor(g, 3));
    }

    /** A write through a reshape's view of v orders later reads of v itself, though the names differ. */
    @Test
    void aWriteThroughAViewIsOrderedAgainstReadsOfTheViewedVar() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, 2, 2).setData(true);
        b.createVar("v", DType.F32, 2, 2);
        b.createVar("flat", DType.F32, 4);
        b.createVar("out", DType.F32, 2, 2);
        scale(b, "x", "v");                                                   // #0
        op(b, "reshape", "v", "flat", Map.of("shape", new long[]{4}));       // #1 flat is a view of v
        scale(b, "flat", "flat");                                             // #2 writes v's bytes
        scale(b, "v", "out");                                                 // #3 reads v: must follow #2
        DependencyGraph g = graphAfterOneRun(p, Map.of("x", Tensor.zeros(2, 2)), true);
        assertEquals(g.classOf[slot(p, "v")], g.classOf[slot(p, "flat")], "v and its view share a storage class");
        assertTrue(waitsFor(g, 3).contains(2), "reading v waits for the write through its view: " + waitsFor(g, 3));
    }

    private static int slot(Program p, String name) {
        return new Plan(p, ExecContext.none()).slotOf.get(name);
    }

    @Test
    void updatesWaitForAllOfBackwardOnlyWhenAsked() {
        Program p = new Program();
        Block b = p.globalBlock();
        b.createVar("x", DType.F32, 4).setData(true);
        b.createVar("w1", DType.F32, 4).setPersistable(true).setParameter(true);
        b.createVar("w2", DType.F32, 4).setPersistable(true).setParameter(true);
        for (String v : List.of("g1", "g2")) {
            b.createVar(v, DType.F32, 4);
        }
        scale(b, "x", "g1");                                         // #0 "backward" of w1
        scale(b, "x", "g2");                                         // #1 "backward" of w2
        b.appendOp("elementwise_add", Map.of("X", List.of("w1"), "Y", List.of("g1")),
                Map.of("Out", List.of("w1")), Map.of());             // #2 update of w1
        b.appendOp("elementwise_add", Map.of("X", List.of("w2"), "Y", List.of("g2")),
                Map.of("Out", List.of("w2")), Map.of());             // #3 update of w2
        Plan plan = ranOnce(p, Map.of("x", Tensor.zeros(4), "w1", Tensor.zeros(4), "w2", Tensor.zeros(4)));
        int[] classes = StorageClasses.of(plan.frame);
        DependencyGraph byData = new DependencyGraph(plan, classes, false);
        assertEquals(List.of(0), waitsFor(byData, 2), "w1's update needs g1 only");
        DependencyGraph ordered = new DependencyGraph(plan, classes, true);
        assertEquals(List.of(0, 1), waitsFor(ordered, 2), "w1's update waits for all of backward");
        assertEquals(List.of(0, 1), waitsFor(ordered, 3));
    }

    @Test
    void storageClassesJoinOverlappingViewsAndMergeOnlyCoarsens() {
        Tensor bucket = Tensor.zeros(8);
        Object[] frame = {bucket.rows(0, 4), Tensor.zeros(3), bucket, bucket.rows(4, 8), null};
        int[] classes = StorageClasses.of(frame);
        assertEquals(0, classes[2]);
        assertEquals(0, classes[3], "both views belong to the bucket's class");
        assertEquals(1, classes[1]);
        assertEquals(4, classes[4], "a slot with no value is its own class");
        int[] later = StorageClasses.of(new Object[]{Tensor.zeros(4), frame[1], Tensor.zeros(8), Tensor.zeros(4), frame[1]});
        assertFalse(Arrays.equals(classes, later));
        assertEquals(List.of(0, 1, 0, 0, 1), Arrays.stream(StorageClasses.merge(classes, later)).boxed().toList());
    }
}
