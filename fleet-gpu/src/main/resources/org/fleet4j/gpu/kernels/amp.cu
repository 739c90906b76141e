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

// out = grad * (1 / scale[0]) (in place when out == grad); found_inf[0] (int64, as fleet-core's FoundInfinite) becomes
// 1 if any result is inf or nan. It is never reset here: one flag serves every gradient of a step.
extern "C" __global__ void check_finite_and_unscale_f32(const float* grad, float* out, const float* scale,
                                                        long long* found_inf, long long n) {
    float s = 1.0f / scale[0];
    GRID_LOOP(i, n) {
        float v = grad[i] * s;
        out[i] = v;
        if (!isfinite(v)) {
            found_inf[0] = 1;
        }
    }
}

// fleet-core's LossScaleRule in one thread: after decr_every steps with inf/nan in a row the scale shrinks by
// decr_ratio (never below 1), after incr_every finite steps in a row it grows by incr_ratio (unless that overflows
// float32); arithmetic in double, as the CPU kernel. Outputs may alias the inputs.
extern "C" __global__ void update_loss_scaling_f32(const long long* found_inf, const float* prev_scale,
                                                   const long long* in_good, const long long* in_bad, float* scale,
                                                   long long* out_good, long long* out_bad, int incr_every,
                                                   int decr_every, float incr_ratio, float decr_ratio) {
    double s = prev_scale[0];
    long long good = in_good[0];
    long long bad = in_bad[0];
    if (found_inf[0] != 0) {
        good = 0;
        bad++;
        if (bad >= decr_every) {
            s = fmax(1.0, s * (double) decr_ratio);
            bad = 0;
        }
    } else {
        bad = 0;
        good++;
        if (good >= incr_every) {
            double grown = s * (double) incr_ratio;
            s = isfinite(grown) && grown <= 3.4028234663852886e38 ? grown : s;
            good = 0;
        }
    }
    scale[0] = (float) s;
    out_good[0] = good;
    out_bad[0] = bad;
}

// out = (x == 0), int64 as fleet-core's logical_not (the AMP step's "all gradients finite" condition).
extern "C" __global__ void logical_not_i64(const long long* x, long long* out, long long n) {
    GRID_LOOP(i, n) { out[i] = x[i] == 0 ? 1 : 0; }
}
