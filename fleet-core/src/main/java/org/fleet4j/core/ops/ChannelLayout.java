package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.fleet4j.core.tensor.Tensor;

/**
 * A float32 tensor seen as [outer, C, inner] for statistics per channel: NCHW is [N, C, H W], [N, C] and NHWC are
 * [rows, C, 1]. These are the loops of batch normalisation, shared by {@code batch_norm} and the sync batch norm ops of
 * ops-fusion, vectorised along the contiguous runs (a channel's H W pixels of one image, or a row's C channels). Sums
 * are taken in float within a run (or a block of rows) and added up in double.
 */
public record ChannelLayout(long outer, long channels, long inner) {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();
    /** Rows summed in float before they are added in double, for the [rows, C] form. */
    private static final int ROW_BLOCK = 64;

    /** X as batch norm sees it: channels at dimension 1 of a 4-D NCHW or [N, C] tensor, or last when channelsLast. */
    public static ChannelLayout of(Tensor x, boolean channelsLast) {
        long[] s = x.shape();
        if (channelsLast || s.length == 2) {
            long c = s[s.length - 1];
            return new ChannelLayout(x.numel() / c, c, 1);
        }
        return new ChannelLayout(s[0], s[1], x.numel() / (s[0] * s[1]));
    }

    /** Elements per channel. */
    public long perChannel() {
        return outer * inner;
    }

    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE);
    }

    /** sum[c] = the sum of channel c's elements. */
    public void sums(MemorySegment x, double[] sum) {
        java.util.Arrays.fill(sum, 0);
        if (inner == 1) {
            float[] block = new float[(int) channels];
            for (long r0 = 0; r0 < outer; r0 += ROW_BLOCK) {
                java.util.Arrays.fill(block, 0f);
                for (long r = r0; r < Math.min(outer, r0 + ROW_BLOCK); r++) {
                    long base = r * channels;
                    for (int c = 0; c < channels; c++) {
                        block[c] += x.getAtIndex(F32.F, base + c);
                    }
                }
                for (int c = 0; c < channels; c++) {
                    sum[c] += block[c];
                }
            }
            return;
        }
        for (long o = 0; o < outer; o++) {
            for (int c = 0; c < channels; c++) {
                long at = (o * channels + c) * inner;
                FloatVector acc = FloatVector.zero(S);
                long i = 0;
                for (long bound = S.loopBound(inner); i < bound; i += L) {
                    acc = acc.add(load(x, at + i));
                }
                float tail = acc.reduceLanes(VectorOperators.ADD);
                for (; i < inner; i++) {
                    tail += x.getAtIndex(F32.F, at + i);
                }
                sum[c] += tail;
            }
        }
    }

    /** out[c] = the sum over channel c of (x - centre[c]) (x - centre[c]). */
    public void centredSquares(MemorySegment x, double[] centre, double[] out) {
        products(x, centre, x, out);
    }

    /** out[c] = the sum over channel c of dy (x - centre[c]). */
    public void centredProducts(MemorySegment dy, MemorySegment x, double[] centre, double[] out) {
        products(x, centre, dy, out);
    }

    /** out[c] = the sum over channel c of (x - centre[c]) other, where other == x means (x - centre[c]) itself. */
    private void products(MemorySegment x, double[] centre, MemorySegment other, double[] out) {
        java.util.Arrays.fill(out, 0);
        boolean squares = x == other;
        if (inner == 1) {
            float[] block = new float[(int) channels];
            float[] mu = toFloats(centre);
            for (long r0 = 0; r0 < outer; r0 += ROW_BLOCK) {
                java.util.Arrays.fill(block, 0f);
                for (long r = r0; r < Math.min(outer, r0 + ROW_BLOCK); r++) {
                    long base = r * channels;
                    for (int c = 0; c < channels; c++) {
                        float d = x.getAtIndex(F32.F, base + c) - mu[c];
                        block[c] += d * (squares ? d : other.getAtIndex(F32.F, base + c));
                    }
                }
                for (int c = 0; c < channels; c++) {
                    out[c] += block[c];
                }
            }
            return;
        }
        for (long o = 0; o < outer; o++) {
            for (int c = 0; c < channels; c++) {
                long at = (o * channels + c) * inner;
                float mu = (float) centre[c];
                FloatVector m = FloatVector.broadcast(S, mu);
                FloatVector acc = FloatVector.zero(S);
                long i = 0;
                for (long bound = S.loopBound(inner); i < bound; i += L) {
                    FloatVector d = load(x, at + i).sub(m);
                    acc = d.fma(squares ? d : load(other, at + i), acc);
                }
                float tail = acc.reduceLanes(VectorOperators.ADD);
                for (; i < inner; i++) {
                    float d = x.getAtIndex(F32.F, at + i) - mu;
                    tail += d * (squares ? d : other.getAtIndex(F32.F, at + i));
                }
                out[c] += tail;
            }
        }
    }

    /** y = x a[c] + b[c]. */
    public void affine(MemorySegment x, float[] a, float[] b, MemorySegment y) {
        combine(x, a, null, null, b, y);
    }

    /** out = u a[c] + v b[c] + d[c]: the input gradient of every batch norm (u = dY, v = X). */
    public void combine(MemorySegment u, float[] a, MemorySegment v, float[] b, float[] d, MemorySegment out) {
        if (inner == 1) {
            long bound = S.loopBound(channels);
            for (long r = 0; r < outer; r++) {
                long base = r * channels;
                int c = 0;
                for (; c < bound; c += L) {
                    FloatVector acc = load(u, base + c).mul(FloatVector.fromArray(S, a, c))
                            .add(FloatVector.fromArray(S, d, c));
                    if (v != null) {
                        acc = load(v, base + c).fma(FloatVector.fromArray(S, b, c), acc);
                    }
                    acc.intoMemorySegment(out, (base + c) * Float.BYTES, NATIVE);
                }
                for (; c < channels; c++) {
                    out.setAtIndex(F32.F, base + c, element(u, a, v, b, d, base + c, c));
                }
            }
            return;
        }
        for (long o = 0; o < outer; o++) {
            for (int c = 0; c < channels; c++) {
                long at = (o * channels + c) * inner;
                FloatVector av = FloatVector.broadcast(S, a[c]);
                FloatVector dv = FloatVector.broadcast(S, d[c]);
                FloatVector bv = v == null ? null : FloatVector.broadcast(S, b[c]);
                long i = 0;
                for (long bound = S.loopBound(inner); i < bound; i += L) {
                    FloatVector acc = load(u, at + i).mul(av).add(dv);
                    if (v != null) {
                        acc = load(v, at + i).fma(bv, acc);
                    }
                    acc.intoMemorySegment(out, (at + i) * Float.BYTES, NATIVE);
                }
                for (; i < inner; i++) {
                    out.setAtIndex(F32.F, at + i, element(u, a, v, b, d, at + i, c));
                }
            }
        }
    }

    private static float element(MemorySegment u, float[] a, MemorySegment v, float[] b, float[] d, long i, int c) {
        float acc = u.getAtIndex(F32.F, i) * a[c] + d[c];
        return v == null ? acc : Math.fma(v.getAtIndex(F32.F, i), b[c], acc);
    }

    private static float[] toFloats(double[] v) {
        float[] f = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            f[i] = (float) v[i];
        }
        return f;
    }
}
