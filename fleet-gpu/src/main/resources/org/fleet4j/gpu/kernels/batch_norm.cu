// batch_norm on f32 X viewed as [outer, C, inner] (NCHW and [N, C]: outer = N; NHWC: inner = 1), as fleet-core's
// CPU kernel: batch mean and biased variance in training, running statistics updated in place with momentum,
// SavedMean and SavedVariance (the inverse standard deviation) kept for the gradient. One block per channel; the
// block size must be a power of two <= 1024. Sums are accumulated in double, like the CPU kernel.
__device__ double block_sum_double(double v) {
    __shared__ double scratch[1024];
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            scratch[threadIdx.x] += scratch[threadIdx.x + s];
        }
        __syncthreads();
    }
    double r = scratch[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void batch_norm_f32(const float* x, const float* scale, const float* bias, float* running_mean,
                                          float* running_var, float* y, float* saved_mean, float* saved_inv_std,
                                          long long outer, long long channels, long long inner, float momentum,
                                          float epsilon, int is_test) {
    long long c = blockIdx.x;
    long long m = outer * inner;
    double mean;
    double var;
    if (is_test) {
        mean = running_mean[c];
        var = running_var[c];
    } else {
        double s = 0.0;
        for (long long j = threadIdx.x; j < m; j += blockDim.x) {
            s += x[((j / inner) * channels + c) * inner + j % inner];
        }
        mean = block_sum_double(s) / m;
        double sq = 0.0;
        for (long long j = threadIdx.x; j < m; j += blockDim.x) {
            double d = x[((j / inner) * channels + c) * inner + j % inner] - mean;
            sq += d * d;
        }
        var = block_sum_double(sq) / m;
        if (threadIdx.x == 0) {
            running_mean[c] = (float) (momentum * (double) running_mean[c] + (1.0 - momentum) * mean);
            running_var[c] = (float) (momentum * (double) running_var[c] + (1.0 - momentum) * var);
        }
    }
    double inv_std = 1.0 / sqrt(var + epsilon);
    if (threadIdx.x == 0) {
        saved_mean[c] = (float) mean;
        saved_inv_std[c] = (float) inv_std;
    }
    double k = scale[c] * inv_std;
    double b = bias[c] - mean * k;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        long long idx = ((j / inner) * channels + c) * inner + j % inner;
        y[idx] = (float) (x[idx] * k + b);
    }
}

// dBias = sum(dY), dScale = sum(dY xhat); training: dX = Scale invStd / m (m dY - dBias - xhat dScale);
// test mode: dX = Scale invStd dY.
extern "C" __global__ void batch_norm_grad_f32(const float* x, const float* scale, const float* saved_mean,
                                               const float* saved_inv_std, const float* dy, float* dx, float* dscale,
                                               float* dbias, long long outer, long long channels, long long inner,
                                               int is_test) {
    long long c = blockIdx.x;
    long long m = outer * inner;
    double mu = saved_mean[c];
    double is = saved_inv_std[c];
    double s_dy = 0.0;
    double s_dy_xhat = 0.0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        long long idx = ((j / inner) * channels + c) * inner + j % inner;
        double g = dy[idx];
        s_dy += g;
        s_dy_xhat += g * (x[idx] - mu) * is;
    }
    s_dy = block_sum_double(s_dy);
    s_dy_xhat = block_sum_double(s_dy_xhat);
    if (threadIdx.x == 0) {
        dbias[c] = (float) s_dy;
        dscale[c] = (float) s_dy_xhat;
    }
    double k0 = scale[c] * is;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        long long idx = ((j / inner) * channels + c) * inner + j % inner;
        double g = dy[idx];
        dx[idx] = (float) (is_test ? k0 * g : k0 / m * (m * g - s_dy - (x[idx] - mu) * is * s_dy_xhat));
    }
}
