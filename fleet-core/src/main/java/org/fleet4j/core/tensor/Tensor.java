package org.fleet4j.core.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * A dense, row-major tensor whose CPU storage is off-heap ({@link MemorySegment}, 64-byte aligned), so that
 * kernels, BLAS calls, shared-memory collectives and network sends all touch the same bytes without copies.
 * A tensor may be a view into another tensor's storage ({@link #reshape}, {@link #rows}).
 */
public final class Tensor {
    public static final long ALIGNMENT = 64;

    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble D = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final DType dtype;
    private final long[] shape;
    private final long numel;
    private final MemorySegment data;

    private Tensor(DType dtype, long[] shape, MemorySegment data) {
        this.dtype = Objects.requireNonNull(dtype, "dtype");
        this.shape = shape.clone();
        this.numel = Shapes.numel(shape);
        long need = numel * dtype.byteSize();
        if (data.byteSize() != need) {
            throw new IllegalArgumentException("storage of " + data.byteSize() + " bytes does not hold a "
                    + dtype.displayName() + " tensor of shape " + Shapes.str(shape) + " (" + need + " bytes)");
        }
        this.data = data;
    }

    /**
     * A new zero-filled tensor, freed by the garbage collector when unreachable.
     *
     * @throws OffHeapMemoryException when the JVM's off-heap limit or the machine cannot hold it
     */
    public static Tensor zeros(DType dtype, long... shape) {
        long bytes = Shapes.numel(shape) * dtype.byteSize();
        return new Tensor(dtype, shape, OffHeapMemory.allocate(bytes, ALIGNMENT,
                () -> "a tensor " + dtype.displayName() + Shapes.str(shape)));
    }

    public static Tensor zeros(long... shape) {
        return zeros(DType.F32, shape);
    }

    /** A tensor over existing memory (no copy). The segment must be exactly the tensor's size. */
    public static Tensor wrap(DType dtype, MemorySegment data, long... shape) {
        return new Tensor(dtype, shape, data);
    }

    public static Tensor of(float[] values, long... shape) {
        Tensor t = zeros(DType.F32, shape.length == 0 && values.length != 1 ? new long[]{values.length} : shape);
        checkCount(values.length, t);
        MemorySegment.copy(values, 0, t.data, F, 0, values.length);
        return t;
    }

    public static Tensor ofDoubles(double[] values, long... shape) {
        Tensor t = zeros(DType.F64, shape.length == 0 ? new long[]{values.length} : shape);
        checkCount(values.length, t);
        MemorySegment.copy(values, 0, t.data, D, 0, values.length);
        return t;
    }

    public static Tensor ofInts(int[] values, long... shape) {
        Tensor t = zeros(DType.I32, shape.length == 0 ? new long[]{values.length} : shape);
        checkCount(values.length, t);
        MemorySegment.copy(values, 0, t.data, I, 0, values.length);
        return t;
    }

    public static Tensor ofLongs(long[] values, long... shape) {
        Tensor t = zeros(DType.I64, shape.length == 0 ? new long[]{values.length} : shape);
        checkCount(values.length, t);
        MemorySegment.copy(values, 0, t.data, L, 0, values.length);
        return t;
    }

    public static Tensor scalar(float value) {
        Tensor t = zeros(DType.F32);
        t.setFloat(0, value);
        return t;
    }

    private static void checkCount(int count, Tensor t) {
        if (count != t.numel) {
            throw new IllegalArgumentException(count + " values do not fill shape " + Shapes.str(t.shape));
        }
    }

    public DType dtype() {
        return dtype;
    }

    /** A copy of the shape. */
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int i) {
        return shape[i < 0 ? shape.length + i : i];
    }

    public long numel() {
        return numel;
    }

    public long byteSize() {
        return data.byteSize();
    }

    /** The raw storage, for kernels, BLAS and transports. */
    public MemorySegment segment() {
        return data;
    }

    public boolean hasShape(long... s) {
        return Arrays.equals(shape, s);
    }

    // ---- element access by flat (row-major) index ----

    public float getFloat(long i) {
        return switch (dtype) {
            case F32 -> data.getAtIndex(F, i);
            case F64 -> (float) data.getAtIndex(D, i);
            case I32 -> data.getAtIndex(I, i);
            case I64 -> data.getAtIndex(L, i);
            case BF16 -> BFloat16.toFloat(data.getAtIndex(S, i));
        };
    }

    public void setFloat(long i, float v) {
        switch (dtype) {
            case F32 -> data.setAtIndex(F, i, v);
            case F64 -> data.setAtIndex(D, i, v);
            case I32 -> data.setAtIndex(I, i, (int) v);
            case I64 -> data.setAtIndex(L, i, (long) v);
            case BF16 -> data.setAtIndex(S, i, BFloat16.fromFloat(v));
        }
    }

    public double getDouble(long i) {
        return switch (dtype) {
            case F64 -> data.getAtIndex(D, i);
            case I64 -> data.getAtIndex(L, i);
            default -> getFloat(i);
        };
    }

    public void setDouble(long i, double v) {
        switch (dtype) {
            case F64 -> data.setAtIndex(D, i, v);
            case I64 -> data.setAtIndex(L, i, (long) v);
            default -> setFloat(i, (float) v);
        }
    }

    public long getLong(long i) {
        return switch (dtype) {
            case I64 -> data.getAtIndex(L, i);
            case I32 -> data.getAtIndex(I, i);
            default -> (long) getDouble(i);
        };
    }

    public void setLong(long i, long v) {
        switch (dtype) {
            case I64 -> data.setAtIndex(L, i, v);
            case I32 -> data.setAtIndex(I, i, Math.toIntExact(v));
            default -> setDouble(i, v);
        }
    }

    /** Element at a multi-dimensional index. */
    public float get(long... index) {
        return getFloat(flatIndex(index));
    }

    public void set(float v, long... index) {
        setFloat(flatIndex(index), v);
    }

    private long flatIndex(long[] index) {
        if (index.length != shape.length) {
            throw new IllegalArgumentException("index " + Arrays.toString(index) + " for shape " + Shapes.str(shape));
        }
        long flat = 0;
        for (int d = 0; d < shape.length; d++) {
            if (index[d] < 0 || index[d] >= shape[d]) {
                throw new IndexOutOfBoundsException("index " + Arrays.toString(index) + " out of " + Shapes.str(shape));
            }
            flat = flat * shape[d] + index[d];
        }
        return flat;
    }

    // ---- views and copies ----

    /** A view with another shape over the same storage; one dimension may be -1. */
    public Tensor reshape(long... newShape) {
        return new Tensor(dtype, Shapes.resolveReshape(shape, newShape), data);
    }

    /** A view of rows [from, to) along the first dimension. */
    public Tensor rows(long from, long to) {
        if (shape.length == 0 || from < 0 || to > shape[0] || from > to) {
            throw new IndexOutOfBoundsException("rows [" + from + ", " + to + ") of shape " + Shapes.str(shape));
        }
        long rowBytes = shape[0] == 0 ? 0 : data.byteSize() / shape[0];
        long[] s = shape.clone();
        s[0] = to - from;
        return new Tensor(dtype, s, data.asSlice(from * rowBytes, (to - from) * rowBytes));
    }

    public Tensor copy() {
        Tensor t = zeros(dtype, shape);
        MemorySegment.copy(data, 0, t.data, 0, data.byteSize());
        return t;
    }

    /** Copies src's elements into this tensor; shapes must hold the same number of elements of the same dtype. */
    public void copyFrom(Tensor src) {
        if (src.dtype != dtype || src.numel != numel) {
            throw new IllegalArgumentException("cannot copy " + src.describe() + " into " + describe());
        }
        MemorySegment.copy(src.data, 0, data, 0, data.byteSize());
    }

    /** This tensor converted to another dtype (a copy, also when the dtype is the same). */
    public Tensor to(DType target) {
        if (target == dtype) {
            return copy();
        }
        Tensor t = zeros(target, shape);
        if (target == DType.I64 || target == DType.I32) {
            for (long i = 0; i < numel; i++) {
                t.setLong(i, getLong(i));
            }
        } else {
            for (long i = 0; i < numel; i++) {
                t.setDouble(i, getDouble(i));
            }
        }
        return t;
    }

    public void fill(double v) {
        if (dtype == DType.F32) {
            float f = (float) v;
            if (f == 0f) {
                data.fill((byte) 0);
            } else {
                for (long i = 0; i < numel; i++) {
                    data.setAtIndex(F, i, f);
                }
            }
            return;
        }
        for (long i = 0; i < numel; i++) {
            setDouble(i, v);
        }
    }

    public float[] toFloatArray() {
        if (dtype == DType.F32) {
            return data.toArray(F);
        }
        float[] out = new float[Math.toIntExact(numel)];
        for (int i = 0; i < out.length; i++) {
            out[i] = getFloat(i);
        }
        return out;
    }

    public double[] toDoubleArray() {
        double[] out = new double[Math.toIntExact(numel)];
        for (int i = 0; i < out.length; i++) {
            out[i] = getDouble(i);
        }
        return out;
    }

    public long[] toLongArray() {
        long[] out = new long[Math.toIntExact(numel)];
        for (int i = 0; i < out.length; i++) {
            out[i] = getLong(i);
        }
        return out;
    }

    /** The flat index of the first NaN or infinite element, or -1 when every element is finite (always for integers). */
    public long firstNonFinite() {
        switch (dtype) {
            case F32 -> {
                for (long i = 0; i < numel; i++) {
                    if (!Float.isFinite(data.getAtIndex(F, i))) {
                        return i;
                    }
                }
            }
            case F64 -> {
                for (long i = 0; i < numel; i++) {
                    if (!Double.isFinite(data.getAtIndex(D, i))) {
                        return i;
                    }
                }
            }
            case BF16 -> {
                for (long i = 0; i < numel; i++) {
                    if (!Float.isFinite(BFloat16.toFloat(data.getAtIndex(S, i)))) {
                        return i;
                    }
                }
            }
            case I32, I64 -> {
            }
        }
        return -1;
    }

    /** The multi-dimensional index of flat index {@code flat}, e.g. "[2, 17]". */
    public String indexOf(long flat) {
        long[] index = new long[shape.length];
        long rest = flat;
        for (int d = shape.length - 1; d >= 0; d--) {
            index[d] = shape[d] == 0 ? 0 : rest % shape[d];
            rest = shape[d] == 0 ? 0 : rest / shape[d];
        }
        return Arrays.toString(index);
    }

    /** "float32[64, 784]". */
    public String describe() {
        return dtype.displayName() + Shapes.str(shape);
    }

    /** Numpy-like text; long dimensions are summarised with "...". */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Tensor(").append(describe()).append(", ");
        appendLevel(sb, 0, 0, 7);
        return sb.append(')').toString();
    }

    private void appendLevel(StringBuilder sb, int dim, long offset, int indent) {
        if (shape.length == 0) {
            appendElement(sb, 0);
            return;
        }
        long n = shape[dim];
        long stride = Shapes.strides(shape)[dim];
        sb.append('[');
        boolean summarise = n > 8;
        for (long i = 0; i < n; i++) {
            if (summarise && i == 3) {
                sb.append(dim == shape.length - 1 ? "..., " : "...,\n" + " ".repeat(indent + dim + 1));
                i = n - 4;
                continue;
            }
            if (dim == shape.length - 1) {
                appendElement(sb, offset + i);
            } else {
                appendLevel(sb, dim + 1, offset + i * stride, indent);
            }
            if (i < n - 1) {
                sb.append(dim == shape.length - 1 ? ", " : ",\n" + " ".repeat(indent + dim + 1));
            }
        }
        sb.append(']');
    }

    /** Five significant digits without trailing zeros: 4.5, 0.33333, 1.2346e+08. */
    private static String compact(double v) {
        String s = String.format(Locale.ROOT, "%.5g", v);
        if (s.contains("e") || !s.contains(".")) {
            return s;
        }
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s + "0" : s;
    }

    private void appendElement(StringBuilder sb, long i) {
        if (dtype == DType.I32 || dtype == DType.I64) {
            sb.append(getLong(i));
        } else {
            double v = getDouble(i);
            sb.append(v == Math.rint(v) && Math.abs(v) < 1e7 ? String.format(Locale.ROOT, "%.1f", v) : compact(v));
        }
    }
}
