// Mixed precision: casts between f32 and bf16/fp16 (held as 16-bit words, so no CUDA headers are needed), and the
// check of scaled gradients before the optimizer runs.
#define GRID_LOOP(i, n) \
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < (n); i += (long long) gridDim.x * blockDim.x)

// Round to nearest even, as fleet-core's BFloat16; nan stays a quiet nan.
extern "C" __global__ void cast_f32_to_bf16(const float* x, unsigned short* out, long long n) {
    GRID_LOOP(i, n) {
        unsigned int bits = __float_as_uint(x[i]);
        if ((bits & 0x7fffffffu) > 0x7f800000u) {
            out[i] = (unsigned short) ((bits >> 16) | 0x40u);
        } else {
            out[i] = (unsigned short) ((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
        }
    }
}

extern "C" __global__ void cast_bf16_to_f32(const unsigned short* x, float* out, long long n) {
    GRID_LOOP(i, n) { out[i] = __uint_as_float(((unsigned int) x[i]) << 16); }
}

extern "C" __global__ void cast_f32_to_f16(const float* x, unsigned short* out, long long n) {
    GRID_LOOP(i, n) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x[i]));
        out[i] = h;
    }
}

extern "C" __global__ void cast_f16_to_f32(const unsigned short* x, float* out, long long n) {
    GRID_LOOP(i, n) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x[i]));
        out[i] = f;
    }
}

// grad *= inv_scale; found_inf[0] becomes 1 if any result is inf or nan (it is never reset here).
extern "C" __global__ void check_finite_and_unscale_f32(float* grad, const float* inv_scale, int* found_inf, long long n) {
    float s = inv_scale[0];
    GRID_LOOP(i, n) {
        float v = grad[i] * s;
        grad[i] = v;
        if (!isfinite(v)) {
            found_inf[0] = 1;
        }
    }
}
