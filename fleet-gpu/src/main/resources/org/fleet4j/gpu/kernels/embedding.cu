// lookup_table on an f32 table [vocab, width] with int64 ids. An id outside [0, vocab) writes a row of nan, so a
// bad id shows in the loss instead of reading foreign memory; padding_idx rows read as zeros and get no gradient.
extern "C" __global__ void lookup_table_f32(const float* table, const long long* ids, float* out, long long count,
                                            long long width, long long vocab, long long padding_idx) {
    long long n = count * width;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        long long id = ids[i / width];
        long long c = i % width;
        out[i] = id == padding_idx ? 0.0f
                : (id >= 0 && id < vocab ? table[id * width + c] : __int_as_float(0x7fc00000));
    }
}

// Dense gradient of the table: dtable must be zeroed first; rows of repeated ids add up.
extern "C" __global__ void lookup_table_grad_f32(const long long* ids, const float* dout, float* dtable, long long count,
                                                 long long width, long long vocab, long long padding_idx) {
    long long n = count * width;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x) {
        long long id = ids[i / width];
        if (id != padding_idx && id >= 0 && id < vocab) {
            atomicAdd(dtable + id * width + i % width, dout[i]);
        }
    }
}
