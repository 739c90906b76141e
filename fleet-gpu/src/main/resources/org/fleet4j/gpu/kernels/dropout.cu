// dropout's training mask from a counter-based generator: element i of step `step` draws from splitmix64 of the seed,
// the step and i, so a step's mask needs no generator state on the device and the same seed gives the same masks.
// (The CPU kernel draws from java.util.SplittableRandom: the masks differ, their law is the same.)
__device__ unsigned long long splitmix64(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// mask[i] = 0 with probability p, else kept (1/(1-p) for upscale_in_train, 1 for downgrade_in_infer); out = x * mask.
extern "C" __global__ void dropout_f32(const float* x, float* out, float* mask, long long n, float p, float kept,
                                       unsigned long long seed, long long step) {
    unsigned long long base = splitmix64(seed ^ splitmix64((unsigned long long) step));
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        double u = (double) (splitmix64(base + (unsigned long long) i) >> 11) * 0x1.0p-53;
        float m = u < p ? 0.0f : kept;
        mask[i] = m;
        out[i] = x[i] * m;
    }
}
