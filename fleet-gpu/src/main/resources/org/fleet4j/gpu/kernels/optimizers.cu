// Parameter updates on f32, in place, matching fleet-core's CPU kernels (Paddle's formulas). The learning rate and
// the beta powers are read from device memory so a schedule never needs a host round trip.
#define GRID_LOOP(i, n) \
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < (n); i += (long long) gridDim.x * blockDim.x)

extern "C" __global__ void sgd_f32(float* param, const float* grad, const float* lr, float weight_decay, long long n) {
    float rate = lr[0];
    GRID_LOOP(i, n) { float p = param[i]; param[i] = p - rate * (grad[i] + weight_decay * p); }
}

// velocity = mu * velocity + grad; param -= lr * velocity (or lr * (grad + mu * velocity) with Nesterov).
extern "C" __global__ void momentum_f32(float* param, const float* grad, float* velocity, const float* lr, float mu,
                                        int nesterov, long long n) {
    float rate = lr[0];
    GRID_LOOP(i, n) {
        float v = mu * velocity[i] + grad[i];
        velocity[i] = v;
        param[i] -= nesterov ? rate * (grad[i] + mu * v) : rate * v;
    }
}

// Adam (coeff 0) and AdamW (decoupled weight decay coeff). beta1_pow and beta2_pow are the powers before this step;
// the host advances them after the launch.
extern "C" __global__ void adam_f32(float* param, const float* grad, float* m1, float* m2, const float* lr,
                                    const float* beta1_pow, const float* beta2_pow, float beta1, float beta2,
                                    float epsilon, float coeff, long long n) {
    float rate = lr[0];
    float b1p = beta1_pow[0];
    float b2p = beta2_pow[0];
    float lr_t = (float) (rate * sqrt(1.0 - (double) b2p) / (1.0 - (double) b1p));
    float eps_t = (float) (epsilon * sqrt(1.0 - (double) b2p));
    float decay = 1.0f - rate * coeff;
    GRID_LOOP(i, n) {
        float g = grad[i];
        float a1 = beta1 * m1[i] + (1.0f - beta1) * g;
        float a2 = beta2 * m2[i] + (1.0f - beta2) * g * g;
        m1[i] = a1;
        m2[i] = a2;
        param[i] = param[i] * decay - lr_t * a1 / (sqrtf(a2) + eps_t);
    }
}
