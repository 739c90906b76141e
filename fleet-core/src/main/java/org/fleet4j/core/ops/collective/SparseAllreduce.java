package org.fleet4j.core.ops.collective;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ProcessGroup;
import org.fleet4j.collective.ReduceOp;
import org.fleet4j.collective.reduce.Reductions;
import org.fleet4j.core.ops.SelectedRows;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code c_allreduce} of a sparse gradient (the SelectedRows of an is_sparse embedding), as Paddle does it: every
 * rank's rows and values are gathered, so each rank ends with all of them (duplicate rows are added by the optimizer,
 * as within one rank); "avg" scales the values by 1/N. Ranks may hold different numbers of rows: the counts are
 * gathered first and the rows padded to the largest count.
 */
final class SparseAllreduce {
    private SparseAllreduce() {
    }

    static SelectedRows run(SelectedRows local, ProcessGroup group, ReduceOp reduce, Duration limit) {
        int n = group.size();
        long width = local.width();
        long mine = local.rows().numel();
        Tensor count = Tensor.zeros(DType.I64, 1);
        count.segment().set(ValueLayout.JAVA_LONG, 0, mine);
        Tensor counts = Tensor.zeros(DType.I64, n);
        group.allgather(count.segment(), counts.segment(), DataType.I64).await(limit);
        long max = 0;
        long total = 0;
        for (int r = 0; r < n; r++) {
            long c = counts.getLong(r);
            max = Math.max(max, c);
            total += c;
        }
        DType valueType = local.values().dtype();
        Tensor rows = Tensor.zeros(DType.I64, total);
        Tensor values = Tensor.zeros(valueType, total, width);
        if (max > 0) {
            Tensor sendRows = Tensor.zeros(DType.I64, max);
            Tensor sendValues = Tensor.zeros(valueType, max, width);
            sendRows.segment().copyFrom(local.rows().segment());
            sendValues.segment().copyFrom(local.values().segment());
            Tensor allRows = Tensor.zeros(DType.I64, n * max);
            Tensor allValues = Tensor.zeros(valueType, n * max, width);
            group.allgather(sendRows.segment(), allRows.segment(), DataType.I64).await(limit);
            group.allgather(sendValues.segment(), allValues.segment(), CollectiveOpTypes.dataType(valueType)).await(limit);
            long rowBytes = width * valueType.byteSize();
            long at = 0;
            for (int r = 0; r < n; r++) {
                long c = counts.getLong(r);
                MemorySegment.copy(allRows.segment(), r * max * 8, rows.segment(), at * 8, c * 8);
                MemorySegment.copy(allValues.segment(), r * max * rowBytes, values.segment(), at * rowBytes, c * rowBytes);
                at += c;
            }
        }
        if (reduce == ReduceOp.AVG) {
            Reductions.divide(values.segment(), 0, values.numel(), CollectiveOpTypes.dataType(valueType), n);
        }
        return new SelectedRows(rows, values, local.height());
    }
}
