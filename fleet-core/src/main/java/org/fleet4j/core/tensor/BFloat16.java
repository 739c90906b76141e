package org.fleet4j.core.tensor;

/** Conversions between float and bfloat16 (the upper 16 bits of an IEEE float), rounding to nearest even. */
public final class BFloat16 {
    private BFloat16() {
    }

    public static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 0x0040); // keep NaN a quiet NaN
        }
        int roundingBias = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + roundingBias) >>> 16);
    }

    public static float toFloat(short b) {
        return Float.intBitsToFloat((b & 0xffff) << 16);
    }
}
