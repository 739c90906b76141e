// Unary activations on f32 and their gradients. Gradients take x, the forward output and the output's gradient,
// like the CPU kernels, and use whichever of them is cheaper.
#define GRID_LOOP(i, n) \
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < (n); i += (long long) gridDim.x * blockDim.x)

extern "C" __global__ void relu_f32(const float* x, float* out, long long n) {
    GRID_LOOP(i, n) { out[i] = fmaxf(x[i], 0.0f); }
}

extern "C" __global__ void relu_grad_f32(const float* x, const float* out, const float* g, float* gx, long long n) {
    GRID_LOOP(i, n) { gx[i] = out[i] > 0.0f ? g[i] : 0.0f; }
}

extern "C" __global__ void sigmoid_f32(const float* x, float* out, long long n) {
    GRID_LOOP(i, n) { out[i] = (float) (1.0 / (1.0 + exp(-(double) x[i]))); }
}

extern "C" __global__ void sigmoid_grad_f32(const float* x, const float* out, const float* g, float* gx, long long n) {
    GRID_LOOP(i, n) { float o = out[i]; gx[i] = g[i] * o * (1.0f - o); }
}

extern "C" __global__ void tanh_f32(const float* x, float* out, long long n) {
    GRID_LOOP(i, n) { out[i] = (float) tanh((double) x[i]); }
}

extern "C" __global__ void tanh_grad_f32(const float* x, const float* out, const float* g, float* gx, long long n) {
    GRID_LOOP(i, n) { float o = out[i]; gx[i] = g[i] * (1.0f - o * o); }
}

// Exact gelu with erf, in double like the CPU kernel.
extern "C" __global__ void gelu_f32(const float* x, float* out, long long n) {
    GRID_LOOP(i, n) { double v = x[i]; out[i] = (float) (0.5 * v * (1.0 + erf(v * 0.70710678118654752440))); }
}

extern "C" __global__ void gelu_grad_f32(const float* x, const float* out, const float* g, float* gx, long long n) {
    GRID_LOOP(i, n) {
        double v = x[i];
        double cdf = 0.5 * (1.0 + erf(v * 0.70710678118654752440));
        double pdf = exp(-0.5 * v * v) * 0.39894228040143267794;
        gx[i] = (float) (g[i] * (cdf + v * pdf));
    }
}

// scale: out = scale * x + bias, in double as fleet-core's kernel (the caller folds bias_after_scale=false into bias).
// With bias 0 it is also scale's gradient: the double product of two floats is exact, so rounding it once gives the
// float product.
extern "C" __global__ void scale_f32(const float* x, float* out, float scale, float bias, long long n) {
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        out[i] = (float) ((double) scale * (double) x[i] + (double) bias);
    }
}
