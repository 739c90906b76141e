package org.fleet4j.core.ir;

import java.util.Arrays;
import java.util.List;

/** The types an op attribute can have; values are normalised to one Java type each so programs compare and print alike. */
public enum AttrType {
    INT, LONG, FLOAT, BOOL, STRING, INTS, LONGS, FLOATS, STRINGS;

    /** Converts a user-supplied value to this type's canonical Java value, or throws naming what was expected. */
    public Object coerce(Object v) {
        switch (this) {
            case INT:
                if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
                    return ((Number) v).intValue();
                }
                if (v instanceof Long l && l == l.intValue()) {
                    return l.intValue();
                }
                break;
            case LONG:
                if (v instanceof Integer || v instanceof Long) {
                    return ((Number) v).longValue();
                }
                break;
            case FLOAT:
                if (v instanceof Number n) {
                    return n.floatValue();
                }
                break;
            case BOOL:
                if (v instanceof Boolean) {
                    return v;
                }
                break;
            case STRING:
                if (v instanceof String) {
                    return v;
                }
                break;
            case INTS:
                if (v instanceof int[] a) {
                    return a.clone();
                }
                if (v instanceof List<?> l) {
                    return l.stream().mapToInt(x -> (Integer) INT.coerce(x)).toArray();
                }
                break;
            case LONGS:
                if (v instanceof long[] a) {
                    return a.clone();
                }
                if (v instanceof int[] a) {
                    return Arrays.stream(a).asLongStream().toArray();
                }
                if (v instanceof List<?> l) {
                    return l.stream().mapToLong(x -> (Long) LONG.coerce(x)).toArray();
                }
                break;
            case FLOATS:
                if (v instanceof float[] a) {
                    return a.clone();
                }
                if (v instanceof List<?> l) {
                    float[] out = new float[l.size()];
                    for (int i = 0; i < out.length; i++) {
                        out[i] = (Float) FLOAT.coerce(l.get(i));
                    }
                    return out;
                }
                break;
            case STRINGS:
                if (v instanceof String[] a) {
                    return a.clone();
                }
                if (v instanceof List<?> l) {
                    return l.stream().map(x -> (String) STRING.coerce(x)).toArray(String[]::new);
                }
                break;
            default:
                break;
        }
        throw new IllegalArgumentException("expected " + this.name().toLowerCase() + ", got "
                + (v == null ? "null" : v.getClass().getSimpleName() + " " + format(v)));
    }

    /** Readable text of an attribute value: 3, 0.5, true, "relu", [1, 2]. */
    public static String format(Object v) {
        if (v instanceof int[] a) {
            return Arrays.toString(a);
        }
        if (v instanceof long[] a) {
            return Arrays.toString(a);
        }
        if (v instanceof float[] a) {
            return Arrays.toString(a);
        }
        if (v instanceof String[] a) {
            return Arrays.toString(a);
        }
        if (v instanceof String s) {
            return '"' + s + '"';
        }
        return String.valueOf(v);
    }

    static boolean valuesEqual(Object a, Object b) {
        return Arrays.deepEquals(new Object[]{a}, new Object[]{b});
    }
}
