package org.fleet4j.collective.nccl;

import org.bytedeco.cuda.global.nccl;
import org.fleet4j.collective.DataType;
import org.fleet4j.collective.ReduceOp;

/** The collective API's dtypes and reduce ops as NCCL's enums (compile-time constants: no native code is loaded). */
final class NcclTypes {
    private NcclTypes() {
    }

    static int dtype(DataType t) {
        return switch (t) {
            case F32 -> nccl.ncclFloat32;
            case F64 -> nccl.ncclFloat64;
            case I32 -> nccl.ncclInt32;
            case I64 -> nccl.ncclInt64;
            case BF16 -> nccl.ncclBfloat16;
        };
    }

    static int op(ReduceOp op) {
        return switch (op) {
            case SUM -> nccl.ncclSum;
            case AVG -> nccl.ncclAvg;
            case MAX -> nccl.ncclMax;
            case MIN -> nccl.ncclMin;
            case PROD -> nccl.ncclProd;
        };
    }
}
