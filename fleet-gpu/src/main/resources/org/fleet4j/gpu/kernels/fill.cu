// Small kernels the GPU executor needs between the ops' main kernels: constants, the mean's gradient, the step
// counter and Adam's beta powers, so a training step never copies a scalar through the host.
#define GRID_LOOP(i, n) \
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < (n); i += (long long) gridDim.x * blockDim.x)

extern "C" __global__ void fill_f32(float* out, float value, long long n) {
    GRID_LOOP(i, n) { out[i] = value; }
}

// out[i] = scalar[0] * scale: mean_grad spreads d mean / n over every input element.
extern "C" __global__ void fill_scaled_f32(const float* scalar, float* out, float scale, long long n) {
    float v = scalar[0] * scale;
    GRID_LOOP(i, n) { out[i] = v; }
}

// x[i] *= factor, in place (Adam's beta powers after each update).
extern "C" __global__ void scale_inplace_f32(float* x, float factor, long long n) {
    GRID_LOOP(i, n) { x[i] *= factor; }
}

// x[i] += step, in place (the increment op on a step counter).
extern "C" __global__ void increment_i64(long long* x, long long step, long long n) {
    GRID_LOOP(i, n) { x[i] += step; }
}

extern "C" __global__ void increment_f32(float* x, float step, long long n) {
    GRID_LOOP(i, n) { x[i] += step; }
}
