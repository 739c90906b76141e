package org.fleet4j.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.JobToken;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.store.TcpStore;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** NCCL on one rank (the most one GPU allows): the id goes through the real store, allreduce leaves data intact. */
class NcclOneRankTest {
    @Test
    void allreduceOnOneRank() {
        GpuAssumptions.require(CudaLibrary.NCCL);
        Duration timeout = Duration.ofSeconds(30);
        try (TcpStore store = TcpStore.host(new InetSocketAddress("127.0.0.1", 0), "nccl-test", JobToken.random(), timeout);
             GpuDevice gpu = GpuDevice.open(0, 0);
             NcclCommunicator comm = NcclCommunicator.open(store, "default", 0, 1, gpu, timeout)) {
            Tensor x = Tensor.of(new float[]{1.5f, -2f, 3f, 4f});
            GpuBuffer buffer = gpu.allocate(x.byteSize());
            gpu.copyFromHost(x.segment(), buffer, 0);
            comm.await(comm.allreduce(buffer, buffer, 4, DataType.F32, ReduceOp.SUM), "allreduce", timeout);
            comm.grouped(() -> comm.await(comm.allreduce(buffer, buffer, 4, DataType.F32, ReduceOp.AVG), "allreduce avg", timeout));
            Tensor back = Tensor.zeros(4);
            gpu.copyToHost(buffer, 0, back.segment());
            for (int i = 0; i < 4; i++) {
                assertEquals(x.getFloat(i), back.getFloat(i));
            }
            Tensor bf = x.to(DType.BF16);
            GpuBuffer b16 = gpu.allocate(bf.byteSize());
            gpu.copyFromHost(bf.segment(), b16, 0);
            comm.await(comm.allreduce(b16, b16, 4, DataType.BF16, ReduceOp.SUM), "bf16 allreduce", timeout);
            Tensor bfBack = Tensor.zeros(DType.BF16, 4);
            gpu.copyToHost(b16, 0, bfBack.segment());
            assertEquals(bf.getFloat(2), bfBack.getFloat(2));
        }
    }
}
