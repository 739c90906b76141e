package org.fleet4j.core.ops;

import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** Conversion of a tensor's values into another tensor of the same size and a float dtype. */
public final class Casts {
    private Casts() {
    }

    /**
     * dst = src converted to dst's dtype: float32 and bfloat16 either way vectorised (rounding to nearest even),
     * the same dtype copied, any other pair element by element through double.
     */
    public static void convert(Tensor src, Tensor dst) {
        long n = src.numel();
        if (dst.numel() != n) {
            throw new IllegalArgumentException("cannot convert " + n + " values into a tensor of " + dst.numel());
        }
        if (src.dtype() == DType.F32 && dst.dtype() == DType.BF16) {
            F32.toBf16(src.segment(), dst.segment(), n);
        } else if (src.dtype() == DType.BF16 && dst.dtype() == DType.F32) {
            F32.fromBf16(src.segment(), dst.segment(), n);
        } else if (src.dtype() == dst.dtype()) {
            dst.copyFrom(src);
        } else {
            for (long i = 0; i < n; i++) {
                dst.setDouble(i, src.getDouble(i));
            }
        }
    }
}
