// Reductions on f32. The block size must be a power of two <= 1024.
__device__ float block_sum(float v) {
    __shared__ float scratch[1024];
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            scratch[threadIdx.x] += scratch[threadIdx.x + s];
        }
        __syncthreads();
    }
    return scratch[0];
}

// out[0] += scale * sum(x); out must be zeroed first. scale 1/n gives the mean.
extern "C" __global__ void sum_f32(const float* x, float* out, long long n, float scale) {
    float s = 0.0f;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        s += x[i];
    }
    s = block_sum(s);
    if (threadIdx.x == 0) {
        atomicAdd(out, s * scale);
    }
}

// out[c] = sum over rows of x[r, c]: the gradient of a bias added to every row. One thread per column.
extern "C" __global__ void column_sum_f32(const float* x, float* out, long long rows, long long cols) {
    long long c = blockIdx.x * (long long) blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (long long r = 0; r < rows; r++) {
            s += x[r * cols + c];
        }
        out[c] = s;
    }
}
