package org.fleet4j.core.ops;

import org.fleet4j.core.tensor.Tensor;

/**
 * The arithmetic of batch normalisation from per-channel statistics, shared by {@code batch_norm} (statistics of this
 * process's batch) and the sync batch norm ops of ops-fusion (statistics summed over every rank): the normalisation
 * Y = Scale (X - mean) / sqrt(var + epsilon) + Bias with its running-statistics update, and the input gradient.
 */
public final class BatchNormalisation {
    private BatchNormalisation() {
    }

    /**
     * Y = X s[c] + b[c] with s = Scale invStd and b = Bias - mean s; SavedMean and SavedVariance get the mean and the
     * inverse standard deviation 1 / sqrt(var + epsilon) that were used.
     */
    public static void normalise(ChannelLayout l, Tensor x, Tensor scale, Tensor bias, double[] mean, double[] var,
                                 float epsilon, Tensor y, Tensor savedMean, Tensor savedInvStd) {
        int c = (int) l.channels();
        float[] s = new float[c];
        float[] b = new float[c];
        for (int k = 0; k < c; k++) {
            double invStd = 1.0 / Math.sqrt(var[k] + epsilon);
            savedMean.setFloat(k, (float) mean[k]);
            savedInvStd.setFloat(k, (float) invStd);
            double sk = scale.getFloat(k) * invStd;
            s[k] = (float) sk;
            b[k] = (float) (bias.getFloat(k) - mean[k] * sk);
        }
        l.affine(x.segment(), s, b, y.segment());
    }

    /** running = momentum running + (1 - momentum) batch, for the mean and the (biased) variance, in place. */
    public static void updateRunning(Tensor runningMean, Tensor runningVar, double[] mean, double[] var, float momentum) {
        for (int k = 0; k < mean.length; k++) {
            runningMean.setFloat(k, (float) (momentum * runningMean.getFloat(k) + (1 - momentum) * mean[k]));
            runningVar.setFloat(k, (float) (momentum * runningVar.getFloat(k) + (1 - momentum) * var[k]));
        }
    }

    /**
     * dX of training-mode batch norm over {@code count} elements per channel (all ranks' for sync batch norm), from the
     * sums of dY and of dY (X - mean) over the same elements: with xhat = (X - mean) invStd,
     * dX = Scale invStd (dY - sum(dY) / count - xhat sum(dY xhat) / count). Test mode (statistics held constant) is
     * dX = Scale invStd dY: pass null sums.
     */
    public static void inputGradient(ChannelLayout l, Tensor x, Tensor dy, Tensor scale, Tensor mean, Tensor invStd,
                                     double[] sumDy, double[] sumDyCentred, double count, Tensor dx) {
        int c = (int) l.channels();
        float[] a = new float[c];
        float[] b = new float[c];
        float[] d = new float[c];
        for (int k = 0; k < c; k++) {
            double is = invStd.getFloat(k);
            double k0 = scale.getFloat(k) * is;
            a[k] = (float) k0;
            if (sumDy != null) {
                double slope = -k0 * is * is * sumDyCentred[k] / count;
                b[k] = (float) slope;
                d[k] = (float) (-k0 * sumDy[k] / count - slope * mean.getFloat(k));
            }
        }
        l.combine(dy.segment(), a, sumDy == null ? null : x.segment(), b, d, dx.segment());
    }
}
