package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.Backend;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.group.ProcessGroups;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * A one-rank process group (the most one GPU allows) meets GPU buffers: its device backend is NCCL, the id goes
 * through the group's real store, allreduce and broadcast leave the data intact, and host calls still run on shm.
 */
class NcclOneRankTest {
    @Test
    void gpuBuffersRunOnTheGroupsNcclBackend() {
        GpuAssumptions.requireNccl();
        Duration timeout = Duration.ofSeconds(30);
        try (ProcessGroup group = ProcessGroups.init(Role.single(), GroupOptions.defaults().withTimeout(timeout));
             GpuDevice gpu = GpuDevice.open(0, 0)) {
            Tensor x = Tensor.of(new float[]{1.5f, -2f, 3f, 4f});
            GpuBuffer buffer = gpu.allocate(x.byteSize());
            gpu.copyFromHost(x.segment(), buffer, 0);
            group.allreduce(buffer.forCollective(), DataType.F32, ReduceOp.SUM).await(timeout);
            group.broadcast(buffer.forCollective(), DataType.F32, 0).await(timeout);
            assertEquals(Backend.NCCL, group.deviceBackend(gpu.ordinal()));
            assertEquals(Backend.SHM, group.backend());
            Tensor back = Tensor.zeros(4);
            gpu.copyToHost(buffer, 0, back.segment());
            for (int i = 0; i < 4; i++) {
                assertEquals(x.getFloat(i), back.getFloat(i));
            }
            Tensor bf = x.to(DType.BF16);
            GpuBuffer b16 = gpu.allocate(bf.byteSize());
            gpu.copyFromHost(bf.segment(), b16, 0);
            group.allreduce(b16.forCollective(), DataType.BF16, ReduceOp.AVG).await(timeout);
            Tensor bfBack = Tensor.zeros(DType.BF16, 4);
            gpu.copyToHost(b16, 0, bfBack.segment());
            assertEquals(bf.getFloat(2), bfBack.getFloat(2));
        }
    }
}
