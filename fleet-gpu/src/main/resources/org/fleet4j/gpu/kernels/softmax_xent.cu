// softmax_with_cross_entropy on f32 logits [rows, classes] with int64 hard labels. One block per row; the block
// size must be a power of two <= 1024. A row labelled ignore_index has loss 0 and no gradient; any other label outside
// [0, classes) gives a nan loss rather than reading out of bounds.
__device__ float block_reduce(float v, bool is_max) {
    __shared__ float scratch[1024];
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float o = scratch[threadIdx.x + s];
            scratch[threadIdx.x] = is_max ? fmaxf(scratch[threadIdx.x], o) : scratch[threadIdx.x] + o;
        }
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_xent_f32(const float* logits, const long long* labels, float* softmax, float* loss,
                                            long long classes, long long ignore_index) {
    const float* x = logits + blockIdx.x * classes;
    float* p = softmax + blockIdx.x * classes;
    float m = __int_as_float(0xff800000); // -inf: NVRTC has no math.h, so no INFINITY macro
    for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
        m = fmaxf(m, x[c]);
    }
    m = block_reduce(m, true);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
        float e = expf(x[c] - m);
        p[c] = e;
        s += e;
    }
    s = block_reduce(s, false);
    float inv = 1.0f / s;
    for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
        p[c] *= inv;
    }
    if (threadIdx.x == 0) {
        long long label = labels[blockIdx.x];
        loss[blockIdx.x] = label == ignore_index ? 0.0f
                : (label >= 0 && label < classes ? logf(s) + m - x[label] : __int_as_float(0x7fc00000));
    }
}

// d logits = (softmax - onehot(label)) * d loss of the row.
extern "C" __global__ void softmax_xent_grad_f32(const float* softmax, const long long* labels, const float* dloss,
                                                 float* dlogits, long long rows, long long classes,
                                                 long long ignore_index) {
    long long n = rows * classes;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        long long r = i / classes;
        long long c = i % classes;
        dlogits[i] = labels[r] == ignore_index ? 0.0f : (softmax[i] - (labels[r] == c ? 1.0f : 0.0f)) * dloss[r];
    }
}
