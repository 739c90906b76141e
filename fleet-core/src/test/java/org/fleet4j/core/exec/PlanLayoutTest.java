package org.fleet4j.core.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.SGD;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

/** The layout every device's plan is built from: slots, what must come from outside, what the step writes back. */
class PlanLayoutTest {
    @Test
    void laysOutSlotsAndAsksTheResolverForEveryOpInProgramOrder() {
        Program main = new Program().setRandomSeed(3);
        Layers nn = new Layers(main, new Program());
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("y", DType.I64, -1, 1);
        new SGD(0.1).minimize(nn.mean(nn.softmaxWithCrossEntropy(nn.fc(x, 3, null), y)));
        PlanLayout layout = new PlanLayout(main);

        List<String> types = layout.kernels(o -> o.index() + " " + o.op().type());
        List<Op> ops = main.globalBlock().ops();
        for (int i = 0; i < ops.size(); i++) {
            assertEquals(i + " " + ops.get(i).type(), types.get(i));
        }
        assertEquals(main.globalBlock().vars().size(), layout.names().length);
        Set<String> params = new TreeSet<>();
        for (int s : layout.persistable()) {
            params.add(layout.names()[s]);
        }
        assertTrue(params.containsAll(List.of("fc_0.w_0", "fc_0.b_0")), params.toString());
        assertTrue(layout.readFirst().containsAll(List.of("x", "y", "fc_0.w_0", "fc_0.b_0")), layout.readFirst().toString());
        assertTrue(layout.writtenPersistables().containsAll(List.of("fc_0.w_0", "fc_0.b_0")),
                layout.writtenPersistables().toString());
        PlanLayout.OpSlots first = layout.ops().get(0);
        assertEquals(List.of(main.globalBlock().ops().get(0).in(first.inSlots()[0])),
                List.of(layout.names()[first.in()[0][0]]), "an input slot holds the slot of its var");
        assertEquals(-1, first.skipTo());
    }
}
