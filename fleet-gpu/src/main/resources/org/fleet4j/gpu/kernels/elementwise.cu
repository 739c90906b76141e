// Binary elementwise ops on f32. y has ny elements and is repeated along x (ny == n: same shape; ny == last dims:
// a bias row), as Paddle's elementwise ops with axis -1.
#define BINARY(NAME, EXPR)                                                                          \
extern "C" __global__ void NAME(const float* x, const float* y, float* out, long long n, long long ny) { \
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n;                     \
         i += (long long) gridDim.x * blockDim.x) {                                                 \
        float a = x[i];                                                                             \
        float b = y[i % ny];                                                                        \
        out[i] = EXPR;                                                                              \
    }                                                                                               \
}

BINARY(elementwise_add_f32, a + b)
BINARY(elementwise_sub_f32, a - b)
BINARY(elementwise_mul_f32, a * b)
BINARY(elementwise_div_f32, a / b)
