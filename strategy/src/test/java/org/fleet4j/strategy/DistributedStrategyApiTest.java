package org.fleet4j.strategy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fleet4j.strategy.files.StrategyFormat;
import org.fleet4j.strategy.schema.Origin;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;
import org.junit.jupiter.api.Test;

/** The Java side of the control panel: fluent setters, group views, snapshots, equality, the table. */
class DistributedStrategyApiTest {
    @Test
    void fluentSettersAndGettersShareTheSchemaStorage() {
        DistributedStrategy s = new DistributedStrategy()
                .fuseGradSizeInMB(16)
                .fuseGradSizeInTFLOPS(20)
                .lastCommGroupSizeMB(2.5)
                .gradientMerge(true)
                .gradientMergeConfigs(c -> c.kSteps(4).avg(false))
                .amp(true)
                .ampConfigs(c -> c.initLossScaling(1024).customWhiteList("conv2d", "mul").usePureFp16(true))
                .buildStrategy(b -> b.fuseBnActOps(true).enableInplace(true))
                .mode(Mode.COLLECTIVE);
        assertEquals(16, s.fuseGradSizeInMB());
        assertEquals(16, s.get(StrategySchema.FUSE_GRAD_SIZE_IN_MB));
        assertEquals(16, s.get("fuse_grad_size_in_MB"));
        assertEquals(20.0, s.fuseGradSizeInTFLOPS());
        assertEquals(2.5, s.lastCommGroupSizeMB());
        assertEquals(4, s.gradientMergeConfigs().kSteps());
        assertFalse(s.gradientMergeConfigs().avg());
        assertEquals(List.of("conv2d", "mul"), s.ampConfigs().customWhiteList());
        assertTrue(s.buildStrategy().fuseBnActOps());
        assertTrue((Boolean) s.get("fuse_bn_act_ops"));
        assertEquals(1024.0, s.get(StrategySchema.AMP_INIT_LOSS_SCALING));
    }

    @Test
    void choiceFieldsTakeTheirJavaEnumsByKeyToo() {
        DistributedStrategy s = new DistributedStrategy().set("mode", Mode.PS).set("protocol", Protocol.STAR_SERVER_LITE);
        assertEquals("ps", s.get(StrategySchema.MODE));
        assertEquals(Protocol.STAR_SERVER_LITE, s.protocol());
        assertEquals("mode: 'star_server' is not allowed; allowed: collective, ps",
                assertThrows(StrategyException.class, () -> s.set("mode", Protocol.STAR_SERVER)).getMessage());
    }

    @Test
    void groupViewsWriteThroughToTheStrategy() {
        DistributedStrategy s = new DistributedStrategy();
        s.localsgdConfigs().kSteps(8).beginStep(100);
        s.larsConfigs().larsCoeff(0.01).excludeFromWeightDecay(List.of("bias"));
        s.aSyncConfigs().sendQueueSize(32);
        s.dgcConfigs().sparsity(0.9, 0.99);
        s.lambConfigs().lambWeightDecay(0.02);
        s.gradientScaleConfigs().scaleStrategy(ScaleStrategy.SUM);
        s.executionStrategy().numIterationPerRun(2).useThreadBarrier(true);
        s.recomputeConfigs().checkpoints(List.of("x"));
        assertEquals(8, s.get("localsgd_configs.k_steps"));
        assertEquals(100, s.localsgdConfigs().beginStep());
        assertEquals(List.of("bias"), s.larsConfigs().excludeFromWeightDecay());
        assertEquals(32, s.aSyncConfigs().sendQueueSize());
        assertEquals(List.of(0.9, 0.99), s.dgcConfigs().sparsity());
        assertEquals(0.02, s.lambConfigs().lambWeightDecay());
        assertEquals("sum", s.get("gradient_scale_configs.scale_strategy"));
        assertEquals(2, s.executionStrategy().numIterationPerRun());
        assertEquals(List.of("x"), s.recomputeConfigs().checkpoints());
    }

    @Test
    void snapshotIsImmutableAndDetached() {
        DistributedStrategy s = new DistributedStrategy().ncclCommNum(2);
        StrategySnapshot snapshot = s.snapshot();
        s.ncclCommNum(3);
        assertEquals(2, snapshot.get(StrategySchema.NCCL_COMM_NUM));
        assertEquals(StrategySchema.fields().size(), snapshot.values().size());
        assertThrows(UnsupportedOperationException.class, () -> snapshot.values().put(StrategySchema.AMP, true));
        assertEquals("unknown key 'nccl_comm'; did you mean nccl_comm_num?",
                assertThrows(StrategyException.class, () -> snapshot.get("nccl_comm")).getMessage());
    }

    @Test
    void listsGivenInJavaAreCopied() {
        List<String> names = new java.util.ArrayList<>(List.of("conv2d"));
        DistributedStrategy s = new DistributedStrategy().ampConfigs(c -> c.customBlackList(names));
        names.add("mul");
        assertEquals(List.of("conv2d"), s.ampConfigs().customBlackList());
        assertThrows(UnsupportedOperationException.class, () -> s.ampConfigs().customBlackList().add("x"));
    }

    @Test
    void equalityIsAboutWhatIsSetNotWhereItWasSet() {
        DistributedStrategy fromCode = new DistributedStrategy().ncclCommNum(2);
        DistributedStrategy fromFile = DistributedStrategy.parse("nccl_comm_num: 2", StrategyFormat.YAML, "s.yaml");
        assertEquals(fromCode, fromFile);
        assertEquals(fromCode.hashCode(), fromFile.hashCode());
        assertEquals(Origin.file("s.yaml", 1), fromFile.origin(StrategySchema.NCCL_COMM_NUM).orElseThrow());
        assertEquals(Origin.code(), fromCode.origin(StrategySchema.NCCL_COMM_NUM).orElseThrow());
        assertNotEquals(fromCode, new DistributedStrategy().ncclCommNum(3));
        fromCode.unset(StrategySchema.NCCL_COMM_NUM);
        assertEquals(new DistributedStrategy(), fromCode);
        assertTrue(fromCode.origin(StrategySchema.NCCL_COMM_NUM).isEmpty());
    }

    @Test
    void toStringIsATableOfEveryField() {
        String table = new DistributedStrategy().fuseGradSizeInMB(16).toString();
        List<String> lines = table.lines().toList();
        assertEquals(StrategySchema.fields().size() + 1, lines.size());
        assertTrue(lines.getFirst().matches("KEY +VALUE +SOURCE"), lines.getFirst());
        assertTrue(table.contains("\nfuse_grad_size_in_MB "), table);
        assertTrue(lines.stream().anyMatch(l -> l.matches("fuse_grad_size_in_MB +16 +code")), table);
        assertTrue(lines.stream().anyMatch(l -> l.matches("lars_configs\\.lars_weight_decay +0\\.0005 +default")), table);
    }

    @Test
    void formatGivesTheFileTextWithoutWritingAFile() {
        assertEquals("{\n  \"nccl_comm_num\" : 2\n}\n", new DistributedStrategy().ncclCommNum(2).format(StrategyFormat.JSON));
        assertEquals("# Fleet4J distributed strategy; docs/STRATEGY.md describes every key\nmode: \"ps\"\n",
                new DistributedStrategy().mode(Mode.PS).format(StrategyFormat.YAML));
    }
}
