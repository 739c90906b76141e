package org.fleet4j.core.ops.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.ExecContext;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** The collective ops: found by ServiceLoader, their group taken from the job's context, their names spelt once. */
class CollectiveOpsTest {
    private static OpSpec spec(String type) {
        OpLibrary library = ServiceLoader.load(OpLibrary.class).stream().map(ServiceLoader.Provider::get)
                .filter(l -> l instanceof CollectiveOpLibrary).findFirst().orElseThrow();
        return library.specs().stream().filter(s -> s.type().equals(type)).findFirst().orElseThrow();
    }

    private static Op op(String type, Map<String, Object> attrs) {
        return new Op(type, Map.of("X", List.of("x")), Map.of("Out", List.of("x")), attrs);
    }

    @Test
    void theLibraryOnTheClassPathDefinesEveryCollectiveOpType() {
        for (String type : List.of(CollectiveOpTypes.ALLREDUCE, CollectiveOpTypes.ALLREDUCE_START, CollectiveOpTypes.WAIT,
                CollectiveOpTypes.BROADCAST, CollectiveOpTypes.REDUCE, CollectiveOpTypes.LEADERS_ALLREDUCE,
                CollectiveOpTypes.REDUCE_SCATTER, CollectiveOpTypes.ALLGATHER)) {
            assertEquals(type, spec(type).type());
        }
    }

    @Test
    void aKernelTakesItsRingFromTheContextItIsMadeWith() {
        Op allreduce = op(CollectiveOpTypes.ALLREDUCE, Map.of(CollectiveOpTypes.RING_ID, 0,
                CollectiveOpTypes.REDUCE_ATTR, "avg"));
        String none = assertThrows(IllegalStateException.class,
                () -> spec(CollectiveOpTypes.ALLREDUCE).kernelFactory().create(allreduce, ExecContext.none())).getMessage();
        assertTrue(none.startsWith("no process group at ring_id 0 (rings: [])"), none);
        try (ProcessGroup group = ProcessGroups.init(Role.single(),
                GroupOptions.defaults().withTimeout(Duration.ofSeconds(20)))) {
            Kernel k = spec(CollectiveOpTypes.ALLREDUCE).kernelFactory().create(allreduce,
                    ExecContext.builder().ring(0, group).build());
            Tensor x = Tensor.zeros(DType.F32, 3);
            x.setFloat(1, 2.5f);
            Object[] frame = {x};
            k.run(new KernelArgs(allreduce, frame, new String[]{"X"}, new int[][]{{0}}, new String[]{"Out"},
                    new int[][]{{0}}));
            assertEquals(2.5f, ((Tensor) frame[0]).getFloat(1), "the average over a world of one");
        }
    }

    @Test
    void theLeadersAllreduceOfARankThatLeadsNoNodeLeavesXAsItIs() {
        Op leaders = op(CollectiveOpTypes.LEADERS_ALLREDUCE, Map.of(CollectiveOpTypes.RING_ID, 2,
                CollectiveOpTypes.REDUCE_ATTR, "sum"));
        Kernel k = spec(CollectiveOpTypes.LEADERS_ALLREDUCE).kernelFactory().create(leaders,
                ExecContext.builder().notMember(2, "the node leaders [0, 2]").build());
        Tensor x = Tensor.zeros(DType.F32, 2);
        x.setFloat(0, 4f);
        Object[] frame = {x};
        k.run(new KernelArgs(leaders, frame, new String[]{"X"}, new int[][]{{0}}, new String[]{"Out"}, new int[][]{{0}}));
        assertEquals(4f, ((Tensor) frame[0]).getFloat(0));
    }
}
